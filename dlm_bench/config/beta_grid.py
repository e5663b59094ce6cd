"""The DLM paper's beta grid and beta selection (supplement, section 4: "Selecting beta")."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


GRID_COL = "cfg.objective.beta_index"  # a report table's column of a run's grid index (null: off the grid)


class OutsideBetaGrid(ValueError):
    """objective.beta_index points below the grid's smallest beta (the sweep skips such points)."""


def beta_grid(n: int, min_beta: float = 0.01) -> list[float]:
    """[n, n/2, n/4, ...] down to the last value >= min_beta."""
    if n < 1 or min_beta <= 0:
        raise ValueError(f"beta_grid needs n >= 1 and min_beta > 0, got n={n}, min_beta={min_beta}")
    grid, beta = [], float(n)
    while beta >= min_beta:
        grid.append(beta)
        beta /= 2
    return grid


def apply_beta_grid_flag(objective_cfg) -> None:
    """A method that does not use beta (objective.beta_grid=false) takes part in a beta_index sweep once,
    at index 0 with its own beta; other indices are skipped, so it is not run once per grid point."""
    k = objective_cfg.beta_index
    if k is None or objective_cfg.beta_grid:
        return
    if k != 0:
        raise OutsideBetaGrid(f"objective.beta_index={k} skipped: this method does not use the beta grid")
    objective_cfg.beta_index = None


def resolve_beta(objective_cfg, n_train: int) -> float:
    """objective.beta, or n / 2^beta_index when a grid index is given."""
    k = objective_cfg.beta_index
    if k is None:
        return float(objective_cfg.beta)
    if k < 0:
        raise OutsideBetaGrid(f"objective.beta_index must be >= 0, got {k}")
    beta = n_train / 2**k
    if beta < objective_cfg.min_beta:
        raise OutsideBetaGrid(
            f"objective.beta_index={k} gives beta={beta:.3g} < min_beta={objective_cfg.min_beta} for n={n_train} "
            f"(the grid has {len(beta_grid(n_train, objective_cfg.min_beta))} points)"
        )
    return beta


def select_beta(
    df: pd.DataFrame,
    metric: str = "val_nll",
    group_cols: tuple[str, ...] = ("dataset", "method", "train_size", "seed"),
) -> pd.DataFrame:
    """One row per group: the run whose validation `metric` is smallest (ties: the larger beta).

    Only status == "ok" rows with a finite metric take part. Every report selects beta with this.
    Only grid points are selected among (the paper's grid [n, n/2, ..., >= 0.01]): where the table has a
    GRID_COL (objective.beta_index) and any run on the grid, runs off the grid (beta_index null: the ELBO at
    beta=1, a beta given by value) are left out; a table without grid runs (beta swept by value) keeps all.
    """
    import pandas as pd  # here, not at the top: the config checks import this module and need no pandas

    ok = df[(df.get("status", "ok") == "ok")] if "status" in df else df
    if GRID_COL in ok and ok[GRID_COL].notna().any():
        ok = ok[ok[GRID_COL].notna()]
    ok = ok[pd.to_numeric(ok[metric], errors="coerce").notna()]
    if ok.empty:
        return ok.copy()
    order = ok.sort_values([metric, "beta"], ascending=[True, False], kind="mergesort")
    return order.groupby(list(group_cols), dropna=False, sort=True).head(1).sort_values(list(group_cols)).reset_index(drop=True)
