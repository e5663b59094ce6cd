"""The Laplace approximation that picks the LGM runs' frozen GP hyperparameters (lgm/frozen_hyperparameters.py,
GPML Algorithm 3.1) against an independent one: the mode of Psi(f) = log p(y|f) - f^T K^-1 f / 2 by scipy's L-BFGS
with scipy's log-likelihood and its derivatives (in alpha, f = K alpha), then log Z = Psi(f^) - log det(I + W^1/2 K W^1/2) / 2."""

import math

import numpy as np
import pytest
import scipy.optimize
import torch
from scipy.special import expit, log_expit, log_ndtr

from dlm_bench.lgm.frozen_hyperparameters import laplace_log_marginal
from dlm_bench.gpmath.sites import make_site


def _terms(lik, y, f):
    if lik == "logistic":  # sigma(y f), y in {-1, +1}
        s = expit(y * f)
        return log_expit(y * f), y * (1 - s), -s * (1 - s)
    z = y * f  # probit: Phi(y f)
    r = np.exp(-0.5 * z * z - log_ndtr(z)) / math.sqrt(2 * math.pi)  # phi(z) / Phi(z)
    return log_ndtr(z), y * r, -r * (z + r)


def _reference(lik, X, y, ell, sf2):
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = sf2 * np.exp(-0.5 * d2 / ell**2) + 1e-8 * sf2 * np.eye(len(y))

    def neg_psi(alpha):  # f = K alpha: Psi = log p(y | K alpha) - alpha^T K alpha / 2 (no K^-1, K is ill-conditioned)
        f = K @ alpha
        lp, g, _ = _terms(lik, y, f)
        return -(lp.sum() - 0.5 * alpha @ f), -(K @ (g - alpha))

    alpha = scipy.optimize.minimize(neg_psi, np.zeros(len(y)), jac=True, method="L-BFGS-B",
                                    options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 20000}).x
    for _ in range(30):  # polish by Newton: alpha <- (I + W K)^-1 (W f + g), the maximiser of the local quadratic
        f = K @ alpha
        _, g, h = _terms(lik, y, f)
        alpha = np.linalg.solve(np.eye(len(y)) - h[:, None] * K, -h * f + g)
    f = K @ alpha
    W = -_terms(lik, y, f)[2]
    sW = np.sqrt(W)
    return -neg_psi(alpha)[0] - 0.5 * np.linalg.slogdet(np.eye(len(y)) + sW[:, None] * K * sW[None, :])[1]


@pytest.mark.parametrize("lik", ["logistic", "probit"])
@pytest.mark.parametrize("ell,sf2", [(1.0, 1.0), pytest.param(0.7, 30.0, marks=pytest.mark.slow), pytest.param(2.0, 0.2, marks=pytest.mark.slow)])  # 3-4 s each
def test_laplace_log_marginal_vs_scipy_mode(lik, ell, sf2):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 2))
    y = np.where(rng.random(60) < expit(3 * np.sin(2 * X[:, 0])), 1.0, -1.0)
    got = laplace_log_marginal(torch.tensor(X), torch.tensor(y), make_site(lik), ell, sf2)
    assert got == pytest.approx(_reference(lik, X, y, ell, sf2), abs=1e-6)


def test_laplace_log_marginal_is_smooth_in_the_outputscale():
    """Nelder-Mead needs a smooth objective: a relative step of 2e-7 in sf2 moves log Z by O(2e-7), not by the
    0.03 nats the variance-derivative cancellation used to give."""
    rng = np.random.default_rng(5)
    X = torch.tensor(rng.normal(size=(80, 3)))
    y = torch.tensor(np.where(rng.random(80) < 0.5, 1.0, -1.0))
    site = make_site("logistic")
    a, b = (laplace_log_marginal(X, y, site, 1.1, s) for s in (20.0, 20.0 * (1 + 2e-7)))
    assert abs(a - b) < 1e-5
