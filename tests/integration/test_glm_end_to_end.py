"""Binary and count tasks through execute on small synthetic CSV tables (no downloads): every
estimator runs, run.json has the contract's metric names, the recorded estimator/likelihood are the ones
used; a Student-t regression run on boston."""

import json
import math

import pytest

from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config
from tests.helpers import glm_overrides

RUNS = [  # task, overrides, recorded estimator, likelihood
    ("binary", ["objective=dlm"], "exact", "probit"),
    ("binary", ["objective=elbo"], "quadrature", "probit"),  # no closed form: exact -> quadrature
    ("binary", ["objective=dlm", "estimator=bmc", "estimator.num_samples=5"], "bmc", "probit"),
    ("binary", ["objective=dlm", "estimator=ups", "estimator.num_samples=2"], "ups", "probit"),
    ("binary", ["objective=dlm", "model.likelihood=logistic", "estimator=ups", "estimator.num_samples=1"], "ups",
     "logistic"),
    ("count", ["objective=elbo"], "exact", "poisson_exp"),
    ("count", ["objective=dlm"], "quadrature", "poisson_exp"),
    ("count", ["objective=dlm", "estimator=smooth_bmc"], "smooth_bmc", "poisson_exp"),
    ("count", ["objective=dlm", "estimator=ups", "estimator.num_samples=1"], "ups", "poisson_exp"),
    ("count", ["objective=elbo", "estimator=bmc", "estimator.num_samples=3", "model.likelihood=poisson_softplus"],
     "bmc", "poisson_softplus"),
    ("count", ["objective=dlm", "objective.hyperparameters=fixed", "estimator=quadrature"], "quadrature",
     "poisson_exp"),
]


@pytest.mark.parametrize("task,extra,estimator,likelihood", RUNS)
def test_glm_run_end_to_end(glm_tables, tmp_path, task, extra, estimator, likelihood):
    record, run_dir = execute(compose_config(glm_overrides(glm_tables, task, tmp_path, *extra)))
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "ok", saved["error"]
    assert (saved["task"], saved["estimator"], saved["likelihood"]) == (task, estimator, likelihood)
    metric = "error" if task == "binary" else "mre"
    assert {f"test_nll", f"val_nll", f"test_{metric}", f"val_{metric}"} <= set(saved["metrics"])
    assert all(math.isfinite(v) for v in saved["metrics"].values())
    assert "test_mse" not in saved["metrics"]
    assert saved["config"]["model"]["mean"] == ("constant" if task == "binary" else "zero")


def test_student_t_regression_run(tmp_path):
    cfg = compose_config([f"results_dir={tmp_path}", "trainer.max_iters=15", "trainer.progress=off",
                          "model.likelihood=student_t", "objective=dlm", "model.num_inducing=10"])
    record, run_dir = execute(cfg)
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "ok", saved["error"]
    assert (saved["likelihood"], saved["estimator"]) == ("student_t", "quadrature")
    m = saved["metrics"]
    assert {"test_nll", "test_mse", "test_nll_raw", "test_mse_raw", "noise_var"} <= set(m)
    assert m["test_mse_raw"] > m["test_mse"]  # boston's target std is > 1
