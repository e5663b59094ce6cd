"""dlm_bench.models.predictive_metrics.predictive_metrics, the one metrics path: the Gaussian case against scipy, the bundles
without a predictive density (square-loss DLM, free-form PAC-SGP), and tracked learning curves of a
non-Gaussian run (the last tracked row equals the reported metrics)."""

import math

import gpytorch
import numpy as np
import pytest
import torch
from scipy import stats

from dlm_bench.likelihoods import GaussianLikelihood
from dlm_bench.models.predictive_metrics import predictive_metrics
from tests.helpers import make_likelihood

D = torch.float64
MU = torch.tensor([0.2, -1.0, 0.7, 2.0], dtype=D)
VAR = torch.tensor([0.3, 0.05, 1.2, 0.5], dtype=D)
Y = torch.tensor([0.0, -1.3, 1.9, 1.1], dtype=D)
X = torch.zeros(4, 1, dtype=D)


class Bundle:
    def __init__(self, likelihood, var=VAR, noise="likelihood"):
        self.likelihood, self.var = likelihood, var
        self.noise = likelihood.noise.reshape(-1)[0] if noise == "likelihood" else noise

    def eval(self):
        pass

    def predict_f(self, X):
        return MU, self.var


def test_gaussian_metrics_against_scipy():
    lik = make_likelihood(GaussianLikelihood, noise=0.4)
    out = predictive_metrics(Bundle(lik), X, Y, 3.0, "test")
    noise = lik.noise.item()  # 0.4 after the constraint's round trip
    assert noise == pytest.approx(0.4, rel=1e-6)
    nll = -stats.norm.logpdf(Y.numpy(), MU.numpy(), np.sqrt(VAR.numpy() + noise)).mean()
    mse = ((Y - MU) ** 2).mean().item()
    assert out == pytest.approx({"test_nll": nll, "test_nll_raw": nll + math.log(3.0),
                                 "test_mse": mse, "test_mse_raw": 9.0 * mse}, rel=1e-12)


def test_no_predictive_density_gives_the_mse_of_the_latent_mean():
    mse = ((Y - MU) ** 2).mean().item()
    want = {"val_mse": pytest.approx(mse, rel=1e-12), "val_mse_raw": pytest.approx(4.0 * mse, rel=1e-12)}
    lik = make_likelihood(GaussianLikelihood)
    assert predictive_metrics(Bundle(lik, var=None), X, Y, 2.0, "val") == want  # square-loss DLM
    assert predictive_metrics(Bundle(lik, noise=None), X, Y, 2.0, "val") == want  # free-form PAC-SGP
    assert predictive_metrics(Bundle(lik), X[:0], Y[:0], 2.0, "val") == {}


def test_a_likelihood_without_the_metrics_contract_is_refused():
    with pytest.raises(TypeError, match="not a registered likelihood"):
        predictive_metrics(Bundle(gpytorch.likelihoods.GaussianLikelihood().double()), X, Y, 1.0, "test")
