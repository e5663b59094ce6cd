"""Binary and count tasks on small synthetic CSV tables (no downloads): bad combinations are one-line
ConfigErrors; the metrics against scipy on fixed marginals. (The runs themselves, every estimator through
execute: tests/integration/test_glm_end_to_end.py.)"""


import numpy as np
import pytest
import torch
from scipy import stats

from dlm_bench.errors import ConfigError
from dlm_bench.likelihoods import LIKELIHOODS
from dlm_bench.models.predictive_metrics import predictive_metrics
from dlm_bench.run import execute, run_name
from dlm_bench.sweeps.compose import compose_config
from tests import reference as ref
from tests.helpers import glm_overrides


@pytest.mark.parametrize("extra,needle", [
    (["objective=elbo", "estimator=ups", "estimator.num_samples=2"], "estimator=ups estimates"),
    (["model=sgpr"], "Gaussian-likelihood method"),
    (["model.likelihood=poisson_exp"], "does not fit"),
    (["model.likelihood=cauchy"], "unknown model.likelihood"),
    (["objective=dlm", "estimator=bmc", "estimator.nu=0.1", "estimator.num_samples=3"], "applies to estimator=smooth_bmc"),
    (["objective=dlm", "estimator=quadrature", "estimator.num_samples=3"], "not estimator=quadrature"),
])
def test_glm_bad_combinations(glm_tables, tmp_path, extra, needle):
    with pytest.raises(ConfigError, match=needle):
        execute(compose_config(glm_overrides(glm_tables, "binary", tmp_path, *extra)))


def test_regression_run_names_are_unchanged_by_the_new_keys():
    """model.likelihood (gaussian) and estimator.nu (null) are left out of the hash: a regression run
    keeps the name it had before they existed (value recorded from the parent commit)."""
    cfg = compose_config(["trainer.max_iters=10"])
    assert run_name(cfg) == "boston_svgp_elbo_beta1_seed0_" + OLD_DEFAULT_DIGEST


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
