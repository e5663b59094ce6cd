"""Binary and count tasks through runner.execute on small synthetic CSV tables (no downloads): every
estimator runs, run.json has the contract's metric names, the recorded estimator/likelihood are the ones
used, bad combinations are one-line ConfigErrors; the metrics against scipy on fixed marginals."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from dlm_bench import runner
from dlm_bench.cli import compose_config
from dlm_bench.errors import ConfigError
from dlm_bench.evaluation import predictive_metrics
from dlm_bench.likelihoods import LIKELIHOODS
from tests import reference as ref


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    rng = np.random.default_rng(0)
    d = tmp_path_factory.mktemp("glm")
    X = rng.normal(size=(240, 2))
    f = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": (f + 0.3 * rng.normal(size=240) > 0).astype(int)}).to_csv(
        d / "binary.csv", index=False)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": rng.poisson(np.exp(1 + f))}).to_csv(d / "count.csv", index=False)
    return d


def overrides(tables, task, tmp_path, *extra):
    return [f"dataset=csv", f"dataset.path={tables / (task + '.csv')}", "dataset.target=y", f"dataset.task={task}",
            "protocol=dlm_classification", "protocol.train_size=150", "protocol.test_size=60", "model.num_inducing=10",
            f"results_dir={tmp_path}", "trainer.max_iters=15", "trainer.progress=off", *extra]


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
def test_glm_run_end_to_end(tables, tmp_path, task, extra, estimator, likelihood):
    record, run_dir = runner.execute(compose_config(overrides(tables, task, tmp_path, *extra)))
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "ok", saved["error"]
    assert (saved["task"], saved["estimator"], saved["likelihood"]) == (task, estimator, likelihood)
    metric = "error" if task == "binary" else "mre"
    assert {f"test_nll", f"val_nll", f"test_{metric}", f"val_{metric}"} <= set(saved["metrics"])
    assert all(math.isfinite(v) for v in saved["metrics"].values())
    assert "test_mse" not in saved["metrics"]
    assert saved["config"]["model"]["mean"] == ("constant" if task == "binary" else "zero")


@pytest.mark.parametrize("extra,needle", [
    (["objective=elbo", "estimator=ups", "estimator.num_samples=2"], "estimator=ups estimates"),
    (["model=sgpr"], "Gaussian-likelihood method"),
    (["model.likelihood=poisson_exp"], "does not fit"),
    (["model.likelihood=cauchy"], "unknown model.likelihood"),
    (["objective=dlm", "estimator=bmc", "estimator.nu=0.1", "estimator.num_samples=3"], "applies to estimator=smooth_bmc"),
    (["objective=dlm", "estimator=quadrature", "estimator.num_samples=3"], "not estimator=quadrature"),
])
def test_glm_bad_combinations(tables, tmp_path, extra, needle):
    with pytest.raises(ConfigError, match=needle):
        runner.execute(compose_config(overrides(tables, "binary", tmp_path, *extra)))


def test_regression_run_names_are_unchanged_by_the_new_keys():
    """model.likelihood (gaussian) and estimator.nu (null) are left out of the hash: a regression run
    keeps the name it had before they existed (value recorded from the parent commit)."""
    cfg = compose_config(["trainer.max_iters=10"])
    assert runner.run_name(cfg) == "boston_svgp_elbo_beta1_seed0_" + OLD_DEFAULT_DIGEST


OLD_DEFAULT_DIGEST = "9b5eda64"  # dlm-bench run trainer.max_iters=10 at commit 4a5df78


class FakeBundle:
    def __init__(self, kind, mu, var):
        self.likelihood = LIKELIHOODS[kind]().double()
        self.mu, self.var = mu, var

    def eval(self):
        pass

    def predict_f(self, X):
        return self.mu, self.var


def test_binary_metrics_against_scipy():
    mu, var = torch.tensor([1.2, -0.4, 0.1, -2.0], dtype=torch.float64), torch.tensor([0.5, 2.0, 0.1, 1.0],
                                                                                         dtype=torch.float64)
    y = torch.tensor([1.0, 1.0, 0.0, 0.0], dtype=torch.float64)
    out = predictive_metrics(FakeBundle("probit", mu, var), torch.zeros(4, 1), y, 1.0, "test")
    s = 2 * y.numpy() - 1
    assert out["test_nll"] == pytest.approx(-stats.norm.logcdf(s * mu.numpy() / np.sqrt(1 + var.numpy())).mean())
    assert out["test_error"] == pytest.approx(0.5)  # points 2 and 3 are on the wrong side of 0


def test_count_metrics_against_reference():
    mu, var = torch.tensor([0.5, 2.0, 1.0], dtype=torch.float64), torch.tensor([0.2, 0.1, 1.0], dtype=torch.float64)
    y = torch.tensor([0.0, 9.0, 30.0], dtype=torch.float64)
    out = predictive_metrics(FakeBundle("poisson_exp", mu, var), torch.zeros(3, 1), y, 1.0, "test")
    nll = -np.mean([ref.log_marginal_ref("poisson_exp", *c) for c in zip(y.numpy(), mu.numpy(), var.numpy())])
    assert out["test_nll"] == pytest.approx(nll, rel=1e-6)
    y_hat = np.exp(mu.numpy() + var.numpy() / 2)
    assert out["test_mre"] == pytest.approx(np.mean(np.abs(y_hat - y.numpy()) / np.maximum(1, y.numpy())))


def test_student_t_regression_run(tmp_path):
    cfg = compose_config([f"results_dir={tmp_path}", "trainer.max_iters=15", "trainer.progress=off",
                          "model.likelihood=student_t", "objective=dlm", "model.num_inducing=10"])
    record, run_dir = runner.execute(cfg)
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "ok", saved["error"]
    assert (saved["likelihood"], saved["estimator"]) == ("student_t", "quadrature")
    m = saved["metrics"]
    assert {"test_nll", "test_mse", "test_nll_raw", "test_mse_raw", "noise_var"} <= set(m)
    assert m["test_mse_raw"] > m["test_mse"]  # boston's target std is > 1
