"""A sweep's plan before anything runs: every grid point composed, named, given its state and validated (a bad point
is `invalid` with its one-line reason), the `--dry-run` text, and the `--estimate` line."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from omegaconf import DictConfig

from ..config.beta_grid import OutsideBetaGrid, apply_beta_grid_flag
from ..errors import ConfigError, NotApplicable
from ..results.contract import read_status
from ..run import config_dict, run_dir_for, run_name
from ..util.locks import holder
from .compose import compose_errors, point_message
from .hydra_app import expand, main_hydra

DRY_RUN_WORDS = {
    "new": "new",
    "rerun": "will re-run (forced or failed before)",
    "done": "done (skipped)",
    "failed": "failed (skipped; --retry-failed re-runs it)",
    "outside_grid": "not applicable (beyond the beta grid, or a method without beta)",
    "running_elsewhere": "running elsewhere (locked by another sweep)",
    "not_applicable": "not applicable (a point the paper does not have)",
    "invalid": "INVALID",
    "no_data": "DATA UNAVAILABLE",
}
SKIPPED = ("outside_grid", "not_applicable")  # the states of points a sweep skips without running them


class PlannedPoint(NamedTuple):
    shown: str  # the point's swept overrides
    name: str | None  # its run name (None when it cannot be named)
    state: str  # a DRY_RUN_WORDS key
    reason: str | None = None  # why an invalid point is invalid
    overrides: tuple = ()  # every override of the point
    config: dict | None = None  # a new point's resolved config (the cost estimate's input)


def point_state(cfg: DictConfig, run_dir: Path | None = None) -> tuple[str, Path | None]:
    """What a sweep does with this grid point, before it runs: (state, run_dir) with state one of
    new | done | failed | rerun | outside_grid | running_elsewhere. Mutates cfg.objective like a run."""
    try:
        apply_beta_grid_flag(cfg.objective)
    except OutsideBetaGrid:
        return "outside_grid", None
    run_dir = run_dir_for(cfg) if run_dir is None else run_dir
    status = read_status(run_dir)
    if status is not None and not cfg.resume.force:
        if status in ("ok", "diverged"):
            return "done", run_dir
        if status == "failed" and not cfg.resume.retry_failed:
            return "failed", run_dir
    if holder(run_dir) is not None:
        return "running_elsewhere", run_dir
    return ("new" if status is None else "rerun"), run_dir


# Hydra composes a point in ~0.1 s (seconds on a loaded machine), too slow for a paper-size grid (thousands of
# points) to be composed twice. plan_sweep composes once per distinct set of group choices (experiment, method,
# dlm_data, model=...) and applies the point's value overrides (key.sub=value, seed=...) as Hydra's config loader
# does after composing the defaults list (OmegaConf.update, merge=True); tests/integration/test_sweep_real_runs.py
# checks the result against Hydra's own composition of every point. From this many points on it reports progress.
PROGRESS_FROM = 500


def _is_group_override(key: str) -> bool:
    from ..config.schema import GROUPS

    return key.startswith("hydra/") or key in GROUPS + ("experiment",)


def plan_sweep(overrides: list[str], compose_each: bool = False) -> list[PlannedPoint]:
    """Every grid point as a PlannedPoint, nothing launched and nothing written: its run name and state, each
    point validated as its run would validate it before loading data (harness.validate_point), so a bad point is
    `invalid` with its one-line reason. The grid is expanded as Hydra's BasicSweeper does (hydra.sweeper.params of
    the composed config, then the command-line sweeps). compose_each: compose every point with Hydra (slow; tests)."""
    out = []
    with main_hydra() as hydra:
        master, parser, points, sweeps = expand(hydra, overrides)
        every = max(1, len(points) // 10) if len(points) >= PROGRESS_FROM else 0
        composed: dict[tuple, object] = {}
        for i, point in enumerate(points):
            if every and i and i % every == 0:
                print(f"sweep: checked {i} of {len(points)} grid points", file=sys.stderr, flush=True)
            shown = " ".join(p for p in point if p.partition("=")[0] in sweeps)
            out.append(_plan_point(hydra, master, parser, list(point), shown, composed, compose_each))
    return out


def first_runnable_point(overrides: list[str], leave_out=lambda key: False) -> list[str]:
    """Every override of the first grid point (BasicSweeper order) that `dlm-bench sweep <overrides>` runs rather
    than skips as not applicable (a method without beta at a beta index above 0; not in the paper); the first point
    when none is. Swept keys that `leave_out` names are not swept. Composes once per distinct set of group choices
    met on the way, as plan_sweep does."""
    with main_hydra() as hydra:
        master, parser, points, _ = expand(hydra, overrides, leave_out)
        composed: dict[tuple, object] = {}
        for point in points:
            if _plan_point(hydra, master, parser, list(point), "", composed, False).state not in SKIPPED:
                return list(point)
        return list(points[0]) if points else []


def _plan_point(hydra, master, parser, point: list[str], shown: str, composed: dict, compose_each: bool):
    import copy

    from omegaconf import OmegaConf, open_dict

    from ..data import DatasetError
    from ..run import validate_point

    try:
        if compose_each:
            cfg = hydra.config_loader.load_sweep_config(master, point)
        else:
            groups = tuple(o for o in point if _is_group_override(o.partition("=")[0].lstrip("+~")))
            if groups not in composed:
                composed[groups] = hydra.config_loader.load_sweep_config(master, list(groups))
            cfg = copy.deepcopy(composed[groups])
            for o in parser.parse_overrides([o for o in point if o not in groups]):
                if not o.key_or_group.startswith("hydra."):
                    OmegaConf.update(cfg, o.key_or_group, o.value(), merge=True)
        with open_dict(cfg):
            del cfg["hydra"]  # what the task function sees
        OmegaConf.to_container(cfg, resolve=True)  # interpolation errors (${nope}) show here
        # cfg is this point's own copy: named first (run_name copies once more), then its state, then validated
        # in place as its run would be (each DictConfig copy costs tens of ms: thousands of points add up)
        try:
            apply_beta_grid_flag(cfg.objective)
        except OutsideBetaGrid:
            return PlannedPoint(shown, None, "outside_grid", None, tuple(point))
        name = run_name(cfg)
        state, _ = point_state(cfg, run_dir_for(cfg) if cfg.run_dir else Path(cfg.results_dir) / cfg.experiment / name)
        validate_point(cfg, overrides=point)
        config = config_dict(cfg) if state in ("new", "rerun") else None
        return PlannedPoint(shown, name, state, None, tuple(point), config)
    except NotApplicable as err:
        return PlannedPoint(shown, None, "not_applicable", str(err), tuple(point))
    except (ConfigError, DatasetError, ValueError, *compose_errors()) as err:
        return PlannedPoint(shown, None, "invalid", point_message(err), tuple(point))


SHORT = {"outside_grid": "not applicable", "not_applicable": "not in the paper", "no_data": "without data"}


def dry_run_lines(plan: list[PlannedPoint]) -> list[str]:
    width = max((len(p.shown) for p in plan), default=0)
    lines = [f"{i:4d}  {p.shown.ljust(width)}  {p.name or '-'}  {DRY_RUN_WORDS[p.state]}"
             + (f": {p.reason}" if p.reason else "") for i, p in enumerate(plan)]
    lines += num_inducing_lines(plan)
    counts = Counter(p.state for p in plan)
    lines.append(f"dry run: {len(plan)} grid points, " + ", ".join(f"{counts[s]} {SHORT.get(s, s.replace('_', ' '))}"
                                                             for s in DRY_RUN_WORDS if counts[s]) + "; nothing was run")
    return lines


def num_inducing_lines(plan: list[PlannedPoint]) -> list[str]:
    """One line per distinct M that a size rule (model.num_inducing_rule) chose for the new points: the rule's
    choice is seen before anything runs."""
    from omegaconf import OmegaConf

    from ..data.api import dataset_size

    chosen = {}
    for p in plan:
        model = (p.config or {}).get("model", {})
        if model.get("num_inducing_rule") is not None:
            rows = dataset_size(OmegaConf.create(p.config["dataset"]))
            chosen[(model["num_inducing_rule"], rows, model["num_inducing"])] = None
    return [f"model.num_inducing = {m} (model.num_inducing_rule={rule}: {rows} rows in the data set)"
            for rule, rows, m in chosen]


def invalid_points_message(plan: list[PlannedPoint]) -> str | None:
    """One line naming the first invalid point and its reason (and how many there are), or None."""
    bad = [(i, p) for i, p in enumerate(plan) if p.state == "invalid"]
    if not bad:
        return None
    i, p = bad[0]
    more = f" ({len(bad)} of {len(plan)} grid points are invalid; --dry-run lists them)" if len(bad) > 1 else ""
    return f"grid point {i} ({p.shown or ' '.join(p.overrides)}) is invalid: {p.reason}{more}; nothing was run"


def plan_estimate(plan: list[PlannedPoint]):
    """The cost estimate of the plan's new points (cost_estimate.py), learnt from the finished runs beside them, and
    each grid point's estimated single-core seconds in plan order (0 for a point that will not run, None: unknown)."""
    from .cost_estimate import Estimate, estimate

    new = [(i, p.config) for i, p in enumerate(plan) if p.config is not None]
    seconds: list = [0.0] * len(plan)
    est = Estimate()
    roots = {Path(c["results_dir"]) / c["experiment"] for _, c in new}
    for root in sorted(roots):
        mine = [(i, c) for i, c in new if Path(c["results_dir"]) / c["experiment"] == root]
        dirs = [Path(c["run_dir"]) if c.get("run_dir") else (root / plan[i].name if plan[i].name else None)
                for i, c in mine]  # where a checkpoint of an interrupted run would be
        part = estimate([(c, c["model"].get("likelihood")) for _, c in mine], root, dirs)
        est.add(part)
        for (i, _), s in zip(mine, part.per_point):
            seconds[i] = s
    est.grid_points = len(plan)  # every grid point is a Hydra job, skipped ones too: each pays the launch
    return est, seconds
