"""Every method preset composes to what it names, alone and at every grid point of every experiment.

The table below is written by hand from the papers (Wei et al. 2021 sec. 6 and supplement; Reeb et al. 2018
sec. 3 and App. D), not from the yaml files: a preset that loses its estimator or its model defaults fails here.
"""

from __future__ import annotations

import itertools
import re

import pytest
from omegaconf import OmegaConf

from dlm_bench.cli import UserError
from dlm_bench.config.schema import conf_dir, group_options
from dlm_bench.sweeps.compose import compose_config
from tests.helpers import sweeper_params

# method -> (model, objective, estimator, num_samples, nu, hyperparameters, num_inducing, mean, likelihood)
# num_inducing/mean are the model group's defaults (svgp: 50/auto; sgpr, fitc: 50/zero; pac_sgp: 100/zero;
# exact_gp and pac_gp have no inducing points: the schema default 50 is unused).
SVGP = ("svgp",)
TABLE = {
    "elbo": SVGP + ("elbo", "exact", None, None, "joint", 50, "auto", None),
    "beta_elbo": SVGP + ("elbo", "exact", None, None, "joint", 50, "auto", None),
    "dlm": SVGP + ("dlm", "exact", None, None, "joint", 50, "auto", None),
    "dlm_fixed": SVGP + ("dlm", "exact", None, None, "fixed", 50, "auto", None),
    "dlm_bmc1": SVGP + ("dlm", "bmc", 1, None, "joint", 50, "auto", None),
    "dlm_bmc10": SVGP + ("dlm", "bmc", 10, None, "joint", 50, "auto", None),
    "dlm_bmc100": SVGP + ("dlm", "bmc", 100, None, "joint", 50, "auto", None),
    "dlm_fixed_bmc10": SVGP + ("dlm", "bmc", 10, None, "fixed", 50, "auto", None),
    "dlm_smooth_bmc1": SVGP + ("dlm", "smooth_bmc", 1, 1e-4, "joint", 50, "auto", None),
    "dlm_smooth_bmc10": SVGP + ("dlm", "smooth_bmc", 10, 1e-4, "joint", 50, "auto", None),
    "dlm_ups1": SVGP + ("dlm", "ups", 1, None, "joint", 50, "auto", None),
    "dlm_ups10": SVGP + ("dlm", "ups", 10, None, "joint", 50, "auto", None),
    "sq_dlm": SVGP + ("sq_dlm", "exact", None, None, "joint", 50, "auto", None),
    "sq_dlm_fixed": SVGP + ("sq_dlm", "exact", None, None, "fixed", 50, "auto", None),
    "sgpr": ("sgpr", "elbo", "exact", None, None, "joint", 50, "zero", None),
    "fitc": ("fitc", "elbo", "exact", None, None, "joint", 50, "zero", None),
    "vfe": ("sgpr", "elbo", "exact", None, None, "joint", 50, "zero", None),
    "fitc_pac": ("fitc", "elbo", "exact", None, None, "joint", 50, "zero", None),
    "full_gp": ("exact_gp", "elbo", "exact", None, None, "joint", 50, "zero", None),
    "kl_pac_gp": ("pac_gp", "pac_kl", "exact", None, None, "joint", 50, "zero", None),
    "sqrt_pac_gp": ("pac_gp", "pac_sqrt", "exact", None, None, "joint", 50, "zero", None),
    "kl_pac_sgp": ("pac_sgp", "pac_kl", "exact", None, None, "joint", 100, "zero", None),
    "sqrt_pac_sgp": ("pac_sgp", "pac_sqrt", "exact", None, None, "joint", 100, "zero", None),
    # SAVIGP (Dezfouli & Bonilla 2015): its own ELBO; posterior family in savigp.* (checked below)
    "savigp_fg": ("savigp", "elbo", "exact", None, None, "joint", 50, "zero", None),
    "savigp_mog1": ("savigp", "elbo", "exact", None, None, "joint", 50, "zero", None),
    "savigp_mog2": ("savigp", "elbo", "exact", None, None, "joint", 50, "zero", None),
}
SAVIGP_POSTERIOR = {"savigp_fg": ("fg", 1), "savigp_mog1": ("mog", 1), "savigp_mog2": ("mog", 2)}
FIELDS = ("model", "objective", "estimator", "num_samples", "nu", "hyperparameters", "num_inducing", "mean", "likelihood")
# PAC presets start the noise at 1 and Z at k-means centres (the paper's GPflow code)
PAC_EXTRA = {"vfe", "fitc_pac", "full_gp", "kl_pac_gp", "sqrt_pac_gp", "kl_pac_sgp", "sqrt_pac_sgp"}
# DLM paper / upstream conjugate code (docs/dlm_fidelity.md): joint SVGP and DLM start the noise at 1; the
# uncollapsed SVGP / DLM methods train on minibatches of 6000 (full batch up to 6000 points) with Adam 1e-3
DLM_NOISE_1 = {"beta_elbo", "dlm", "dlm_bmc1", "dlm_bmc10", "dlm_bmc100"}
DLM_MINIBATCH = DLM_NOISE_1 | {"dlm_fixed", "dlm_fixed_bmc10"}


def composed_tuple(cfg) -> tuple:
    return (
        cfg.model.name, cfg.objective.name, cfg.estimator.name, cfg.estimator.num_samples, cfg.estimator.get("nu"),
        cfg.objective.hyperparameters.value, cfg.model.num_inducing, cfg.model.mean.value, cfg.model.get("likelihood"),
    )


def test_table_covers_every_preset():
    assert sorted(TABLE) == group_options("method")


@pytest.mark.parametrize("method", sorted(TABLE))
def test_preset_composes_to_its_table_row(method):
    cfg = compose_config([f"method={method}"])
    got = composed_tuple(cfg)
    print(f"{method:18s} " + " ".join(f"{k}={v}" for k, v in zip(FIELDS, got)))
    assert dict(zip(FIELDS, got)) == dict(zip(FIELDS, TABLE[method]))
    if method in SAVIGP_POSTERIOR:
        assert (cfg.savigp.posterior, cfg.savigp.components) == SAVIGP_POSTERIOR[method]


def spelled_out(method: str) -> list[str]:
    model, objective, estimator, n, nu, hyp, *_ = TABLE[method]
    est_option = {("bmc", 1): "bmc1", ("bmc", 10): "bmc10", ("bmc", 100): "bmc100"}.get((estimator, n), estimator)
    ovs = [f"model={model}", f"objective={objective}", f"estimator={est_option}", f"objective.hyperparameters={hyp}"]
    if estimator in ("smooth_bmc", "ups"):
        ovs.append(f"estimator.num_samples={n}")
    if nu is not None:
        ovs.append(f"estimator.nu={nu}")
    if method in ("elbo", "sgpr", "fitc"):
        ovs.append("objective.beta_grid=false")
    if method in SAVIGP_POSTERIOR:
        kind, k = SAVIGP_POSTERIOR[method]
        ovs += [f"savigp.posterior={kind}", f"savigp.components={k}"]
    if method in DLM_NOISE_1:
        ovs.append("model.noise_init=1.0")
    if method in DLM_MINIBATCH:
        ovs += ["trainer.batch_size=6000", "trainer.stochastic_lr=0.001"]
    if method in PAC_EXTRA:
        ovs.append("model.noise_init=1.0")
        if model != "exact_gp":
            ovs.append("model.inducing_init=kmeans")
    return ovs


@pytest.mark.parametrize("method", sorted(TABLE))
def test_preset_equals_spelled_out_equivalent(method):
    a = OmegaConf.to_container(compose_config([f"method={method}"]), enum_to_str=True)
    b = OmegaConf.to_container(compose_config(spelled_out(method)), enum_to_str=True)
    assert a == b


# --- every grid point of every experiment config --------------------------------------------------
TUPLE_KEYS = ("method", "dlm_data", "dataset", "model", "objective", "estimator")
TUPLE_FIELDS_SET = ("model.num_inducing", "model.mean", "model.likelihood", "objective.hyperparameters")


def _values(spec) -> list[str]:
    spec = str(spec)
    m = re.fullmatch(r"\s*range\((-?\d+)\s*,\s*(-?\d+)\)\s*", spec)
    if m:
        return [str(v) for v in range(int(m.group(1)), int(m.group(2)))]
    return [v.strip() for v in spec.split(",")]


def grid_points(experiment: str) -> list[list[str]]:
    """The experiment's grid restricted to the keys that can change the composed tuple."""
    params = sweeper_params(experiment)
    keys = [k for k in params if k in TUPLE_KEYS or k in TUPLE_FIELDS_SET or k.startswith("estimator.")]
    axes = [[f"{k}={v}" for v in _values(params[k])] for k in keys]
    return [[f"experiment={experiment}", *p] for p in itertools.product(*axes)]


def explicit_values(overrides: list[str]) -> dict:
    """Tuple fields an experiment file, a dlm_data file or the grid point sets explicitly (they win over the table)."""
    out = {}
    files = []
    for o in overrides:
        if o.startswith("experiment="):  # a smoke variant's full variant first, then the smoke file
            name = o.partition("=")[2]
            node = OmegaConf.load(conf_dir() / "experiment" / f"{name}.yaml")
            files += [conf_dir() / "experiment" / f"{d}.yaml" for d in node.get("defaults", []) if isinstance(d, str) and d != "_self_"]
            files.append(conf_dir() / "experiment" / f"{name}.yaml")
    files += [conf_dir() / "dlm_data" / f"{o.partition('=')[2]}.yaml" for o in overrides if o.startswith("dlm_data=")]
    for f in files:
        node = OmegaConf.load(f)
        for key, field in (("model.num_inducing", "num_inducing"), ("model.mean", "mean"),
                           ("model.likelihood", "likelihood"), ("objective.hyperparameters", "hyperparameters")):
            v = OmegaConf.select(node, key)
            if v is not None:
                out[field] = v
    for o in overrides:
        key, _, v = o.partition("=")
        field = {"model.num_inducing": "num_inducing", "model.mean": "mean", "model.likelihood": "likelihood"}.get(key)
        if field:
            out[field] = int(v) if field == "num_inducing" else v
    return out


EXPERIMENTS = group_options("experiment")


def _grid_params():
    """A full experiment with a smoke variant is slow-marked (make test-slow): its smoke variant composes the same
    keys' choices (test_smoke_variant_sweeps_the_keys_of_its_full_variant) at a fraction of the points (60 s CPU)."""
    return [pytest.param(e, marks=pytest.mark.slow) if f"{e}_smoke" in EXPERIMENTS else e for e in EXPERIMENTS]


@pytest.mark.parametrize("experiment", _grid_params())
def test_every_grid_point_composes_to_the_table(experiment):
    points = grid_points(experiment)
    assert points
    for point in points:
        try:
            cfg = compose_config(point)
        except UserError as err:
            pytest.fail(f"{' '.join(point)}: {err}")
        got = dict(zip(FIELDS, composed_tuple(cfg)))
        method = next((o.partition("=")[2] for o in point if o.startswith("method=")), None)
        if method is None:  # no preset: the chosen groups must be what ran
            for o in point:
                key, _, value = o.partition("=")
                if key == "estimator":
                    est = OmegaConf.load(conf_dir() / "estimator" / f"{value}.yaml")
                    assert (got["estimator"], got["num_samples"]) == (est.name, est.num_samples), point
            continue
        want = dict(zip(FIELDS, TABLE[method]))
        want.update(explicit_values(point))
        assert got == want, f"{' '.join(point)}"


def test_dlm_count_grid_runs_bmc10():
    """The regression the issue names: dlm_count's DLM lines ran estimator=exact."""
    cfg = compose_config(["experiment=dlm_count", "dlm_data=abalone", "method=dlm_fixed_bmc10"])
    assert (cfg.estimator.name, cfg.estimator.num_samples, cfg.objective.hyperparameters.value) == ("bmc", 10, "fixed")


SMOKES = [e for e in EXPERIMENTS if e.endswith("_smoke") and e[: -len("_smoke")] in EXPERIMENTS]


@pytest.mark.parametrize("smoke", SMOKES)
def test_smoke_variant_sweeps_the_keys_of_its_full_variant(smoke):
    """A smoke variant is its full experiment made smaller (it inherits it): the same swept keys. A smoke on generated
    files (dataset=csv, e.g. fp_supp5_smoke) sweeps dataset.path where its full variant sweeps dataset."""
    keys = {"dataset" if k == "dataset.path" else k for k in sweeper_params(smoke)}
    assert keys == set(sweeper_params(smoke[: -len("_smoke")]))


def test_conflicting_dataset_choice_is_an_error():
    with pytest.raises(UserError, match="dataset=twonorm conflicts with dlm_data=ringnorm"):
        compose_config(["dlm_data=ringnorm", "dataset=twonorm"])
    assert compose_config(["dlm_data=ringnorm", "dataset=ringnorm"]).dataset.name == "ringnorm"
