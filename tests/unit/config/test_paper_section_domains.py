"""The lgm.* and sggpm.* ranges and choices are field metadata of their paper's config section (papers/fp.py
LgmConfig, papers/sggpm.py SggpmConfig), checked by config.schema.check_domains: each value just outside a domain is
refused by `dlm-bench run` with exit 2 and one line, the field's own Domain message; the value at the boundary passes
validation (so the test pins each bound, not only that something is refused)."""

from __future__ import annotations

import dataclasses

import pytest

from dlm_bench.cli import main
from dlm_bench.config.papers import config_sections
from dlm_bench.errors import ConfigError
from dlm_bench.registry.validation import validate_run
from dlm_bench.sweeps.compose import compose_config

MODEL = {"lgm": "lgm_glm", "sggpm": "sggpm"}
# key, refused (just outside), accepted (at or just inside the bound)
BOUNDS = [
    ("lgm.optimizer", "adam", "fpi_mean"),
    ("lgm.real_likelihood", "poisson", "student_t"),
    ("lgm.prior_var", "0", "1e-300"),
    ("lgm.prior_var", "1000001", "1000000"),
    ("lgm.init_var", "-1", "1e6"),
    ("lgm.lengthscale", "nan", "null"),
    ("lgm.outputscale", "inf", "1e6"),
    ("lgm.subsample", "1", "2"),
    ("lgm.num_inducing", "0", "1"),
    ("lgm.hyper_points", "0", "1"),
    ("lgm.jitter", "1", "0.999"),
    ("lgm.jitter", "-1e-300", "0"),
    ("lgm.grad_tol", "-1e-300", "0"),
    ("lgm.f_tol", "inf", "0"),
    ("lgm.max_iters", "0", "1"),
    ("sggpm.method", "newton_sparse", "laplace_sod"),
    ("sggpm.size_index", "-1", "0"),
    ("sggpm.num_sizes", "0", "1"),
    ("sggpm.num_sizes", "101", "100"),
    ("sggpm.folds", "1", "2"),
    ("sggpm.folds", "101", "100"),
    ("sggpm.max_folds", "0", "null"),
    ("sggpm.perm_seed", "-1", "0"),
    ("sggpm.perm_seed", str(2**63), str(2**63 - 1)),
    ("sggpm.max_outer", "0", "1"),
]


def field_of(key: str):
    section, name = key.split(".")
    (f,) = [f for f in dataclasses.fields(config_sections()[section]) if f.name == name]
    return f


def typed(key: str, text: str):
    """The override as the schema types it (an int field's 2**63 stays an int; a float field's 1 is 1.0)."""
    kind = str(field_of(key).type)
    return float(text) if "float" in kind else int(text) if "int" in kind else text


@pytest.mark.parametrize("key,refused,accepted", BOUNDS, ids=[f"{k}={r}" for k, r, _ in BOUNDS])
def test_a_value_outside_the_declared_domain_exits_2_with_the_fields_message(key, refused, accepted, tmp_path,
                                                                             monkeypatch, capsys):
    for var in ("DLM_BENCH_USER_OMP_NUM_THREADS", "PYTHONWARNINGS"):  # main() sets them; restored after the test
        monkeypatch.delenv(var, raising=False)
    args = [f"model={MODEL[key.split('.')[0]]}", f"results_dir={tmp_path}"]
    domain, value = field_of(key).metadata["domain"], typed(key, refused)
    assert not domain.allows(value)
    assert main(["run", *args, f"{key}={refused}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["dlm-bench: error: " + domain.message.format(key=key, value=value)]
    validate_run(compose_config([*args, f"{key}={accepted}"]))  # the bound itself is allowed
    assert not list(tmp_path.iterdir())  # refused before anything was written


def test_every_moved_range_is_in_the_table():
    """Every field of the two sections with a declared domain has a row above (a new bound gets its row)."""
    declared = {f"{s}.{f.name}" for s in MODEL for f in dataclasses.fields(config_sections()[s])
                if "domain" in f.metadata}
    assert declared == {key for key, _, _ in BOUNDS}


def test_data_dependent_checks_stay_in_the_plugins():
    """What needs the dataset is not field metadata: the likelihood against the task (fp check_lgm)."""
    from dlm_bench.lgm.plugin import check_lgm

    with pytest.raises(ConfigError, match="lgm.likelihood=poisson does not fit"):
        check_lgm(compose_config(["model=lgm_glm", "lgm.likelihood=poisson"]), "regression")
