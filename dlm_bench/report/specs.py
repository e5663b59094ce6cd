"""Report specs are data: one small spec per paper figure / table, keyed by experiment name."""

from __future__ import annotations

from dataclasses import dataclass, field

from .paper_values import PAC_TABLE1, PAC_TABLE2


@dataclass(frozen=True)
class MethodSpec:
    """A line in a figure / a row in a table: the runs matching `where`, with beta selected on the
    validation metric `select_by` per (dataset, train_size, seed[, x]) when given."""

    label: str
    where: tuple[tuple[str, object], ...] = ()
    select_by: str | None = None


@dataclass(frozen=True)
class FigureSpec:
    name: str
    x: str  # run column on the x axis
    metrics: tuple[str, ...]  # one panel per metric, one row of panels per dataset
    methods: tuple[MethodSpec, ...] = ()  # empty: one line per distinct `method`
    xscale: str = "linear"
    xlabel: str | None = None
    title: str = ""
    scatter: bool = False  # one marker per run instead of mean ± SE lines (e.g. local optima over initialisations)


@dataclass(frozen=True)
class TableSpec:
    name: str
    by: tuple[str, ...]  # columns that split the table (besides the method)
    metrics: tuple[str, ...]
    methods: tuple[MethodSpec, ...] = ()
    # published values {(by values..., method label): {metric: (mean, se)}}: the report adds <name>_vs_paper.md
    reference: dict | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class PredictiveSpec:
    """1-D predictive distributions (from each run's predictive.json): one panel per value of `panels` for the
    runs of `method` with seed `seed`, with `overlay` (e.g. the full GP, mean +- 2 sd including noise) drawn in each."""

    name: str
    method: MethodSpec
    panels: str = "epsilon"
    overlay: MethodSpec | None = None
    seed: int = 0
    title: str = ""


def where(**kw) -> tuple[tuple[str, object], ...]:
    return tuple(kw.items())


DEMO_METHODS = (
    MethodSpec("ELBO (beta=1)", where(objective="elbo", beta=1.0)),
    MethodSpec("beta-ELBO (selected)", where(objective="elbo"), select_by="val_nll"),
    MethodSpec("DLM (selected)", where(objective="dlm"), select_by="val_nll"),
)

DEMO_SPECS = (
    FigureSpec("test_vs_beta", x="beta", metrics=("test_nll", "test_mse"), xscale="log",
               title="boston: SVGP, ELBO vs log-loss DLM"),
    TableSpec("by_beta", by=("dataset", "beta"), metrics=("test_nll", "test_mse", "val_nll")),
    TableSpec("selected_beta", by=("dataset",), metrics=("test_nll", "test_mse", "beta"), methods=DEMO_METHODS),
)

# Reeb et al. (2018): the PAC-GP paper. Methods as in its Tables 1-3.
PAC_METRICS = ("bound", "bound_pinsker", "gibbs_train", "gibbs_test", "test_mse", "kl_over_n", "noise_var")
PAC_FULL_METHODS = (
    MethodSpec("kl-PAC-GP", where(model="pac_gp", objective="pac_kl")),
    MethodSpec("sqrt-PAC-GP", where(model="pac_gp", objective="pac_sqrt")),
    MethodSpec("full-GP", where(model="exact_gp")),
)
PAC_SPARSE_METHODS = (
    MethodSpec("kl-PAC-SGP", where(model="pac_sgp", objective="pac_kl")),
    MethodSpec("sqrt-PAC-SGP", where(model="pac_sgp", objective="pac_sqrt")),
    MethodSpec("VFE", where(model="sgpr")),
    MethodSpec("FITC", where(model="fitc")),
)
PAC_TABLE1_SPECS = (
    FigureSpec("fig2", x="epsilon", metrics=("bound", "gibbs_train", "gibbs_test", "test_mse", "kl_over_n"),
               methods=PAC_FULL_METHODS, title="Reeb et al. (2018) Fig. 2: boston, full-GP models"),
    TableSpec("table1", by=("dataset", "epsilon"), metrics=PAC_METRICS, methods=PAC_FULL_METHODS, reference=PAC_TABLE1),
)
PAC_TABLE2_SPECS = (
    FigureSpec("fig3", x="num_inducing", metrics=("bound", "gibbs_train", "gibbs_test", "test_mse", "kl_over_n"),
               methods=tuple(MethodSpec(m.label, m.where + (("ard", True),)) for m in PAC_SPARSE_METHODS),
               title="Reeb et al. (2018) Fig. 3: sparse GPs vs M (epsilon=0.6), SE-ARD"),
    FigureSpec("fig3_se", x="num_inducing", metrics=("bound", "gibbs_train", "gibbs_test", "test_mse", "kl_over_n"),
               methods=tuple(MethodSpec(m.label, m.where + (("ard", False),)) for m in PAC_SPARSE_METHODS),
               title="sparse GPs vs M (epsilon=0.6), SE kernel without ARD"),
    TableSpec("table2", by=("dataset", "ard", "num_inducing"), metrics=PAC_METRICS, methods=PAC_SPARSE_METHODS),
    TableSpec("table2_M500", by=("dataset", "ard"), metrics=PAC_METRICS,
              methods=tuple(MethodSpec(m.label, m.where + (("num_inducing", 500),)) for m in PAC_SPARSE_METHODS),
              reference=PAC_TABLE2),
)

PAC_FIG1_SPECS = (
    PredictiveSpec("fig1", method=MethodSpec("kl-PAC-SGP", where(model="pac_sgp", objective="pac_kl")),
                   overlay=MethodSpec("full-GP", where(model="exact_gp")),
                   title="Reeb et al. (2018) Fig. 1: kl-PAC-SGP on snelson (M=15) for three epsilons"),
    TableSpec("fig1_numbers", by=("dataset", "epsilon"), metrics=("bound", "gibbs_train", "kl_over_n", "noise_var"),
              methods=(MethodSpec("kl-PAC-SGP", where(model="pac_sgp", objective="pac_kl")),
                       MethodSpec("full-GP", where(model="exact_gp")))),
)

PAC_APPE_SPECS = tuple(
    FigureSpec(f"fig7_{key}", x="noise_var", metrics=("train_final_loss",), methods=(m,), xscale="log", scatter=True,
               xlabel="learned sigma_n^2", title=f"Fig. 7 (App. E): {m.label}")
    for key, m in (("fitc", MethodSpec("FITC", where(model="fitc"))),
                   ("kl_pac_sgp", MethodSpec("kl-PAC-SGP", where(model="pac_sgp", objective="pac_kl"))))
) + (TableSpec("appE_summary", by=("dataset",), metrics=("noise_var", "train_final_loss", "bound", "test_mse"),
               methods=(MethodSpec("FITC", where(model="fitc")),
                        MethodSpec("kl-PAC-SGP", where(model="pac_sgp", objective="pac_kl")))),)

PAC_APPF_SPECS = (
    FigureSpec("fig8", x="log_theta", metrics=("bound", "gibbs_train", "gibbs_test", "kl_over_n"),
               methods=tuple(MethodSpec(f"kl-PAC-GP, L={L:g}", where(model="pac_gp", objective="pac_kl", grid_L=float(L)))
                             for L in (1, 2, 4, 8)),
               xlabel="ln|Theta| = (d+1) ln(G+1), G = 2 L 10^r, r = 0, 1, 2, 4",
               title="Reeb et al. (2018) Fig. 8: discretisation of ln theta (one line per L)"),
    TableSpec("appF", by=("grid_L", "round_digits", "log_theta"), metrics=("bound", "gibbs_train", "gibbs_test", "kl_over_n"),
              methods=(MethodSpec("kl-PAC-GP", where(model="pac_gp", objective="pac_kl")),)),
)

PAC_TABLE3_SPECS = (  # l_exp loss, M = 500 (no published values transcribed: App. G's Table 3 body is not in our copy)
    TableSpec("table3", by=("dataset", "ard", "num_inducing", "pac_loss"), metrics=PAC_METRICS, methods=PAC_SPARSE_METHODS),
)

SPECS: dict[str, tuple] = {
    "dlm_demo": DEMO_SPECS, "dlm_demo_smoke": DEMO_SPECS,
    "pac_table1": PAC_TABLE1_SPECS, "pac_table1_smoke": PAC_TABLE1_SPECS,
    "pac_table2": PAC_TABLE2_SPECS, "pac_table2_smoke": PAC_TABLE2_SPECS,
    "pac_fig1": PAC_FIG1_SPECS,
    "pac_appE": PAC_APPE_SPECS,
    "pac_appF": PAC_APPF_SPECS, "pac_appF_smoke": PAC_APPF_SPECS,
    "pac_table3": PAC_TABLE3_SPECS, "pac_table3_smoke": PAC_TABLE3_SPECS,
}


def default_specs(df) -> tuple:
    """For experiments without a spec: a table of every test metric by dataset, beta and train size."""
    metrics = tuple(c for c in ("test_nll", "test_mse", "test_error", "test_mre") if c in df and df[c].notna().any())
    return (TableSpec("summary", by=("dataset", "train_size", "beta"), metrics=metrics or ("train_final_loss",)),)
