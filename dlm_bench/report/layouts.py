"""Report specs are data: one small spec per paper figure / table, keyed by experiment name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .paper_values import PAC_TABLE1, PAC_TABLE2, PAC_TABLE3


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
class CurveSpec:
    """Learning curves from each run's curve.csv: `metric` against `x` (iteration or wall_s), one panel
    per dataset, one line per method, mean ± standard error over seeds at each logged x."""

    name: str
    metric: str
    methods: tuple[MethodSpec, ...] = ()
    x: str = "iteration"
    title: str = ""
    yscale: str = "linear"  # log: the FP paper's GP panels (log(-VLB))


@dataclass(frozen=True)
class TableSpec:
    name: str
    by: tuple[str, ...]  # columns that split the table (besides the method)
    metrics: tuple[str, ...]
    methods: tuple[MethodSpec, ...] = ()
    # published values {(by values..., method label): {metric: (mean, se)}}: the report adds <name>_vs_paper.md
    reference: dict | None = field(default=None, compare=False, hash=False)
    # settings the table averages over on purpose (App. E: 100 noise initialisations); any other setting in which
    # a method's runs differ inside a row splits that method into one series per value (tables.variant_settings)
    over: tuple[str, ...] = ()


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


@dataclass(frozen=True)
class PredictiveComparisonSpec:
    """Several methods' 1-D predictive distributions side by side (Reeb et al. 2018, Fig. 6): one panel per method
    of `methods` (seed `seed`), `overlay` (the full GP) drawn in each, and a table of the distances of each panel to
    the overlay and to each label in `against`. Labels in `pac` are PAC posteriors: drawn noise-free with their
    epsilon band; the others include their noise."""

    name: str
    methods: tuple[MethodSpec, ...]
    overlay: MethodSpec
    pac: tuple[str, ...] = ()
    against: tuple[str, ...] = ()
    seed: int = 0
    title: str = ""


@dataclass(frozen=True)
class SweepFigureSpec:
    """Ad-hoc sweeps (no spec of their own): each metric against the swept config column `x`, one panel per
    metric, one line per combination of the other swept columns `others`, mean ± SE over seeds."""

    name: str
    x: str
    metrics: tuple[str, ...]
    others: tuple[str, ...] = ()


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

# --- DLM paper, regression (Wei et al. 2021, Fig. 1(a)-(c), supplement Figs. 1, 2, 15) ---------------
EXACT = (("estimator", "exact"),)
# The SVGP line is the collapsed form (supplement sec. 4: "regression ELBO for SVGP ... we implement the collapsed
# forms"), i.e. model=sgpr; beta-ELBO is the uncollapsed SVGP, beta selected among the grid points only.
DLM_NLL_METHODS = (
    MethodSpec("SVGP (collapsed ELBO)", where(model="sgpr")),
    MethodSpec("beta-ELBO", where(model="svgp", objective="elbo") + EXACT, select_by="val_nll"),
    MethodSpec("FITC", where(model="fitc")),
    MethodSpec("DLM (joint)", where(objective="dlm", hyperparameters="joint") + EXACT, select_by="val_nll"),
    MethodSpec("DLM (fixed)", where(objective="dlm", hyperparameters="fixed") + EXACT, select_by="val_nll"),
)
DLM_MSE_METHODS = DLM_NLL_METHODS + (
    MethodSpec("sq-DLM (joint)", where(objective="sq_dlm", hyperparameters="joint"), select_by="val_mse"),
    MethodSpec("sq-DLM (fixed)", where(objective="sq_dlm", hyperparameters="fixed"), select_by="val_mse"),
)
DLM_BETA_METHODS = (  # no selection: every beta of the grid is a point on the x axis
    MethodSpec("beta-ELBO", where(model="svgp", objective="elbo") + EXACT),
    MethodSpec("DLM (joint)", where(objective="dlm", hyperparameters="joint") + EXACT),
    MethodSpec("DLM (fixed)", where(objective="dlm", hyperparameters="fixed") + EXACT),
)
BY_TRAIN_SIZE = (
    FigureSpec("nll_vs_train_size", x="train_size", metrics=("test_nll",), methods=DLM_NLL_METHODS, xscale="log",
               xlabel="training size", title="test NLL (beta selected on validation)"),
    FigureSpec("mse_vs_train_size", x="train_size", metrics=("test_mse",), methods=DLM_MSE_METHODS, xscale="log",
               xlabel="training size", title="test MSE (beta selected on validation)"),
    TableSpec("by_train_size", by=("dataset", "train_size"), metrics=("test_nll", "test_mse", "beta"),
              methods=DLM_MSE_METHODS),
)
BY_BETA = (
    FigureSpec("nll_vs_beta", x="beta", metrics=("test_nll",), methods=DLM_BETA_METHODS, xscale="log",
               title="test NLL as a function of beta"),
    TableSpec("by_beta", by=("dataset", "train_size", "beta"), metrics=("test_nll", "val_nll"),
              methods=DLM_BETA_METHODS),
    TableSpec("selected_beta", by=("dataset", "train_size"), metrics=("test_nll", "beta"),
              methods=tuple(MethodSpec(m.label, m.where, select_by="val_nll") for m in DLM_BETA_METHODS)),
)
BMC_CURVES = tuple(
    MethodSpec(label, where(objective="dlm", estimator=est, **({"cfg.estimator.num_samples": L} if L else {})))
    for label, est, L in (("exact", "exact", None), ("bMC-1", "bmc", 1), ("bMC-10", "bmc", 10), ("bMC-100", "bmc", 100))
)
FIG15 = (
    CurveSpec("learning_curves", metric="test_nll", methods=BMC_CURVES,
              title="log-loss DLM, beta = 0.1: exact vs bMC (test NLL during training)"),
    TableSpec("final", by=("dataset",), metrics=("test_nll", "test_mse", "train_wall_s"), methods=BMC_CURVES),
)

# DLM paper, non-conjugate sGP (supplement Figs. 3-6, Fig. 1(d)(e)): one line per method vs training size
def glm_methods(dlm_estimator: str) -> tuple[MethodSpec, ...]:
    return (
        MethodSpec("ELBO (beta=1)", where(objective="elbo", beta=1.0)),
        MethodSpec("beta-ELBO", where(objective="elbo"), select_by="val_nll"),
        MethodSpec("DLM", where(objective="dlm", hyperparameters="joint", estimator=dlm_estimator), select_by="val_nll"),
        MethodSpec("fixed-DLM", where(objective="dlm", hyperparameters="fixed", estimator=dlm_estimator),
                   select_by="val_nll"),
    )


def glm_specs(metric: str, dlm_estimator: str, fig_nll: str, fig_metric: str) -> tuple:
    methods = glm_methods(dlm_estimator)
    return (
        FigureSpec(f"{fig_nll}_nll_vs_train_size", x="train_size", metrics=("test_nll",), methods=methods,
                   xlabel="training size", title=f"{fig_nll}: test NLL"),
        FigureSpec(f"{fig_metric}_{metric.removeprefix('test_')}_vs_train_size", x="train_size", metrics=(metric,),
                   methods=methods, xlabel="training size", title=f"{fig_metric}: {metric}"),
        TableSpec("selected_beta", by=("dataset", "train_size"), metrics=("test_nll", metric, "beta"), methods=methods),
    )


CLS_SPECS = glm_specs("test_error", "exact", "suppl_fig3", "suppl_fig4")
COUNT_SPECS = glm_specs("test_mre", "bmc", "suppl_fig5", "suppl_fig6")


def fig1_panel(name: str, dataset: str, dlm_estimator: str) -> FigureSpec:
    """Fig. 1(d) / 1(e) of the main paper: the test NLL panel of one dataset."""
    methods = tuple(MethodSpec(m.label, m.where + (("dataset", dataset),), m.select_by) for m in glm_methods(dlm_estimator))
    return FigureSpec(name, x="train_size", metrics=("test_nll",), methods=methods, xlabel="training size",
                      title=f"{dataset}: test NLL")


CLS_FULL_SPECS = CLS_SPECS + (fig1_panel("fig1d_ringnorm", "ringnorm", "exact"),)
COUNT_FULL_SPECS = COUNT_SPECS + (fig1_panel("fig1e_peds1", "peds1_dir0", "bmc"),)

# Sampler comparisons (supplement Figs. 13-14): learning curves (test metrics vs iterations) per estimator
SAMPLER_METHODS = (
    MethodSpec("quadrature (exact gradients)", where(estimator="quadrature")),
    *(MethodSpec(f"bMC-{L}", where(estimator="bmc", num_samples=L)) for L in (1, 10, 100)),
    *(MethodSpec(f"uPS-{L}", where(estimator="ups", num_samples=L)) for L in (1, 10)),
    *(MethodSpec(f"smooth-bMC-{L}", where(estimator="smooth_bmc", num_samples=L)) for L in (1, 10)),
)
SAMPLER_COUNT_SPECS = (
    FigureSpec("suppl_fig13_14_learning_curves", x="train_iterations", metrics=("test_nll", "test_mre"),
               methods=SAMPLER_METHODS, xlabel="iterations", title="joint DLM: quadrature vs bMC vs uPS vs smooth-bMC"),
    TableSpec("by_iterations", by=("dataset", "train_iterations"), metrics=("test_nll", "test_mre", "train_wall_s"),
              methods=SAMPLER_METHODS),
)

# Airline (Fig. 1(f), supplement Fig. 7; samplers: Fig. 1(i), supplement Figs. 9-12): learning curves per beta
def airline_specs(methods_for_beta) -> tuple:
    return tuple(
        FigureSpec(f"beta{b:g}_learning_curves", x="train_epochs", metrics=("test_nll", "test_error"),
                   methods=methods_for_beta(b), xlabel="epochs", title=f"airline, beta = {b:g}")
        for b in (0.1, 1.0, 10.0)
    ) + (TableSpec("by_epochs", by=("beta", "train_epochs"), metrics=("test_nll", "test_error")),)


AIRLINE_SPECS = airline_specs(lambda b: (MethodSpec("beta-ELBO", where(objective="elbo", beta=b)),
                                         MethodSpec("DLM", where(objective="dlm", hyperparameters="joint", beta=b)),
                                         MethodSpec("fixed-DLM", where(objective="dlm", hyperparameters="fixed", beta=b))))
SAMPLER_AIRLINE_SPECS = airline_specs(lambda b: tuple(
    MethodSpec("exact" if m.label.startswith("quadrature") else m.label,
               tuple((k, "exact" if v == "quadrature" else v) for k, v in m.where) + (("beta", b),))
    for m in SAMPLER_METHODS))

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

_PAC_FIG6_PANELS = (
    MethodSpec("kl-PAC-SGP, eps 0.1", where(model="pac_sgp", objective="pac_kl", epsilon=0.1)),
    MethodSpec("kl-PAC-SGP, eps 1", where(model="pac_sgp", objective="pac_kl", epsilon=1.0)),
    MethodSpec("FITC", where(model="fitc", epsilon=0.1)),  # FITC, VFE, full GP: epsilon changes only their bound
    MethodSpec("VFE", where(model="sgpr", epsilon=0.1)),
)
PAC_FIG6_SPECS = (
    PredictiveComparisonSpec("fig6", methods=_PAC_FIG6_PANELS,
                             overlay=MethodSpec("full-GP", where(model="exact_gp", epsilon=0.1)),
                             pac=("kl-PAC-SGP, eps 0.1", "kl-PAC-SGP, eps 1"), against=("FITC",),
                             title="Reeb et al. (2018) Fig. 6 (App. E): predictive distributions on snelson (M=15)"),
    TableSpec("fig6_numbers", by=("dataset", "epsilon"), metrics=("bound", "gibbs_train", "kl_over_n", "noise_var",
                                                                   "test_mse"),
              methods=(MethodSpec("kl-PAC-SGP", where(model="pac_sgp", objective="pac_kl")),
                       MethodSpec("FITC", where(model="fitc")), MethodSpec("VFE", where(model="sgpr")),
                       MethodSpec("full-GP", where(model="exact_gp")))),
)

PAC_APPE_SPECS = tuple(
    FigureSpec(f"fig7_{key}", x="noise_var", metrics=("train_final_loss",), methods=(m,), xscale="log", scatter=True,
               xlabel="learned sigma_n^2", title=f"Fig. 7 (App. E): {m.label}")
    for key, m in (("fitc", MethodSpec("FITC", where(model="fitc"))),
                   ("kl_pac_sgp", MethodSpec("kl-PAC-SGP", where(model="pac_sgp", objective="pac_kl"))))
) + (TableSpec("appE_summary", by=("dataset",), metrics=("noise_var", "train_final_loss", "bound", "test_mse"),
               methods=(MethodSpec("FITC", where(model="fitc")),
                        MethodSpec("kl-PAC-SGP", where(model="pac_sgp", objective="pac_kl"))),
               over=("cfg.model.noise_init",)),)

PAC_APPF_SPECS = (
    FigureSpec("fig8", x="log_theta", metrics=("bound", "gibbs_train", "gibbs_test", "kl_over_n"),
               methods=tuple(MethodSpec(f"kl-PAC-GP, L={L:g}", where(model="pac_gp", objective="pac_kl", grid_L=float(L)))
                             for L in (1, 2, 4, 8)),
               xlabel="ln|Theta| = (d+1) ln(G+1), G = 2 L 10^r, r = 0, 1, 2, 4",
               title="Reeb et al. (2018) Fig. 8: discretisation of ln theta (one line per L)"),
    TableSpec("appF", by=("grid_L", "round_digits", "log_theta"), metrics=("bound", "gibbs_train", "gibbs_test", "kl_over_n"),
              methods=(MethodSpec("kl-PAC-GP", where(model="pac_gp", objective="pac_kl")),)),
)

PAC_TABLE3_SPECS = (  # l_exp loss, M = 500; published values: kin40k SE-ARD only (the docstring of paper_values.py says why)
    TableSpec("table3", by=("dataset", "ard", "num_inducing", "pac_loss"), metrics=PAC_METRICS, methods=PAC_SPARSE_METHODS),
    TableSpec("table3_ard", by=("dataset", "ard"), metrics=PAC_METRICS, methods=PAC_SPARSE_METHODS,
              reference=PAC_TABLE3),
)

@dataclass(frozen=True)
class ExternalSpec:
    """A paper's own report code for plots the generic specs cannot draw (SAVIGP's per-point box plots):
    build(run_json_paths, out_dir, name) -> list of written files."""

    name: str
    build: Callable


def _savigp_build(paths, out, name):
    from ..savigp.report import build

    return build(paths, out, name=name)


SAVIGP_SPECS = (ExternalSpec("savigp", _savigp_build),)


def _sggpm_build(paths, out, name):
    from ..sggpm.report import build

    return build(paths, out, name=name)


SGGPM_SPECS = (ExternalSpec("sggpm", _sggpm_build),)


def _fp_specs(fig: str, title: str, yscale: str) -> tuple:
    """Sheth & Khardon (2016): -VLB vs process CPU seconds, one panel per dataset, one line per optimiser."""
    methods = tuple(MethodSpec(label, (("variant", opt),)) for label, opt in
                    (("GRAD", "grad"), ("FPb", "fpb"), ("FPi", "fpi"), ("FPi + FP-mean", "fpi_mean")))
    return (CurveSpec(fig, metric="objective", x="cpu_s", methods=methods, title=title, yscale=yscale),
            TableSpec(f"{fig}_final", by=("dataset",), metrics=("vlb", "train_iterations", "train_cpu_s"), methods=methods))


FP_SPECS = {
    "fp_fig2": _fp_specs("fig2", "Sheth & Khardon (2016) Fig. 2: GLM, -VLB (log; the paper: linear) vs CPU s", "log"),
    "fp_fig3": _fp_specs("fig3", "Fig. 3: full GP, -VLB (log) vs CPU s", "log"),
    "fp_fig4": _fp_specs("fig4", "Fig. 4: sparse GP, Laplace, M = 100, -VLB (log) vs CPU s", "log"),
    "fp_fig5": _fp_specs("fig5", "Fig. 5: GP Student-t, -VLB (log) vs CPU s", "log"),
    "fp_supp3": _fp_specs("supp3", "Supplement Fig. 3: GRAD / FPb / FPi / FPi + FP-mean, -VLB (log) vs CPU s", "log"),
    "fp_supp4": _fp_specs("supp4", "Supplement Fig. 4: GLM, -VLB (log; the paper: linear) vs CPU s", "log"),
    "fp_supp5": _fp_specs("supp5", "Supplement Fig. 5: GLM logistic, D = 250 / 500 / 750, -VLB (log) vs CPU s", "log"),
}

SPECS: dict[str, tuple] = {  # report spec name (an experiment's `report:` key) -> its tables and figures
    **FP_SPECS,
    "savigp_fig1": SAVIGP_SPECS, "savigp_fig2": SAVIGP_SPECS, "savigp_fig3": SAVIGP_SPECS, "savigp_fig4": SAVIGP_SPECS,
    "sggpm_fig2": SGGPM_SPECS, "sggpm_fig4": SGGPM_SPECS,
    "dlm_airline": AIRLINE_SPECS,
    "dlm_samplers_airline": SAMPLER_AIRLINE_SPECS,
    "dlm_samplers_count": SAMPLER_COUNT_SPECS,
    "dlm_demo": DEMO_SPECS,
    "dlm_classification": CLS_FULL_SPECS, "dlm_classification_smoke": CLS_SPECS,
    "dlm_count": COUNT_FULL_SPECS, "dlm_count_smoke": COUNT_SPECS,
    "dlm_fig1ab": BY_TRAIN_SIZE, "dlm_supp_pol": BY_TRAIN_SIZE, "dlm_supp_cadata": BY_TRAIN_SIZE,
    "dlm_supp_song": BY_TRAIN_SIZE,
    "dlm_fig1c": BY_BETA, "dlm_supp_beta_cadata": BY_BETA,
    "dlm_supp_fig15": FIG15,
    # the compare presets (conf/experiment/compare_*.yaml): the DLM paper's layouts on the user's data
    "compare_regression": BY_TRAIN_SIZE, "compare_classification": CLS_SPECS, "compare_count": COUNT_SPECS,
    "pac_table1": PAC_TABLE1_SPECS,
    "pac_table2": PAC_TABLE2_SPECS,
    "pac_fig1": PAC_FIG1_SPECS,
    "pac_fig6": PAC_FIG6_SPECS,
    "pac_appE": PAC_APPE_SPECS,
    "pac_appF": PAC_APPF_SPECS,
    "pac_table3": PAC_TABLE3_SPECS,
}


def specs_for(experiment: str, df) -> tuple:
    """An experiment's report spec: the `report` key its runs were made with (runs written before the key
    existed: the spec named like the experiment, or like its full variant), else default_specs."""
    names = df["cfg.report"].dropna().unique().tolist() if "cfg.report" in df else []
    for name in names + [experiment, experiment.removesuffix("_smoke")]:
        if name in SPECS:
            return SPECS[name]
    return default_specs(df)


NOT_SWEPT = ("cfg.seed", "cfg.experiment", "cfg.paper")  # seeds are replicates, not a swept setting
# Settings that say where or how a run ran, not what it computed: they never split a series, a facet or a cell,
# even when two runs differ in them (a sweep forces trainer.progress=lines; single runs keep auto). The same
# settings run/naming.run_name leaves out of a run's name (tests/unit/test_report.py checks that each of these
# leaves the name unchanged); launcher (threads: launcher.cpus), resume, results_dir and run_dir are not even
# collected (collect.CONFIG_SKIP).
NO_EFFECT = ("cfg.trainer.progress", "cfg.report", "cfg.objective.beta_batch")


def result_settings(columns) -> list[str]:
    """The config columns among `columns` that can change a result: cfg.* less NOT_SWEPT and NO_EFFECT."""
    return [c for c in columns if c.startswith("cfg.") and c not in NOT_SWEPT and c not in NO_EFFECT]


def swept_columns(df) -> list[str]:
    """Config columns that can change a result and take more than one value among the ok runs; of columns that
    vary together (method=... sets several keys) only the shortest name is kept."""
    ok = df[df["status"] == "ok"] if "status" in df else df
    groups: dict[tuple, str] = {}
    for col in sorted(result_settings(ok.columns), key=lambda c: (len(c), c)):
        values = ok[col].astype(str)
        if values.nunique() < 2:
            continue
        partition = tuple(pd_codes(values))
        groups.setdefault(partition, col)
    return list(groups.values())


def pd_codes(values) -> list[int]:
    seen: dict = {}
    return [seen.setdefault(v, len(seen)) for v in values]


def default_specs(df) -> tuple:
    """For experiments without a spec: a table of every test metric by dataset, beta and train size, and
    for each swept config key a figure of every test metric against it (SweepFigureSpec)."""
    metrics = tuple(c for c in ("test_nll", "test_mse", "test_error", "test_mre") if c in df and df[c].notna().any())
    specs = [TableSpec("summary", by=("dataset", "train_size", "beta"), metrics=metrics or ("train_final_loss",))]
    swept = swept_columns(df)
    for x in swept:
        specs.append(SweepFigureSpec("sweep_" + x[len("cfg."):].replace(".", "-"), x=x, metrics=metrics or ("train_final_loss",),
                                     others=tuple(c for c in swept if c != x)))
    return tuple(specs)
