"""SGGPM predictive probabilities p(y | x) = int p(y | f) N(f | mu, s2) df (sggpm/metrics.py) against scipy's
adaptive quad split at the likelihood's kinks: the ordinal site at upstream's slope 50 (steps 1/50 wide) and the
logistic site, predictive sd from 0.05 to 3. Gauss-Hermite-64, used before, is off by up to 0.1 here."""

import math

import numpy as np
import pytest
import torch
from scipy.integrate import quad
from scipy.special import expit
from scipy.stats import norm

from dlm_bench.lgm.sites import make_site
from dlm_bench.sggpm.metrics import log_predictive, metrics

THETA = [-1.0, -1 / 3, 1 / 3, 1.0]


def _ref(p, mu, sd, kinks):
    cuts = sorted({mu - 12 * sd, mu + 12 * sd, *[t for t in kinks if mu - 12 * sd < t < mu + 12 * sd]})
    return sum(quad(lambda f: p(f) * norm.pdf(f, mu, sd), a, b, epsabs=1e-14, epsrel=1e-12, limit=400)[0]
               for a, b in zip(cuts[:-1], cuts[1:]))


def _cases(seed, n=40):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1, n), np.exp(rng.uniform(math.log(0.05), math.log(3.0), n))


def test_ordinal_predictive_probabilities_vs_scipy():
    site = make_site("ordinal", thresholds=THETA, slope=50.0)
    mu, sd = _cases(0)
    y = np.random.default_rng(1).integers(1, 6, mu.size)
    got = log_predictive(site, torch.tensor(y, dtype=torch.float64), torch.tensor(mu), torch.tensor(sd**2)).exp()
    for j in range(mu.size):
        lo, hi = ([-np.inf] + THETA)[y[j] - 1], (THETA + [np.inf])[y[j] - 1]
        want = _ref(lambda f: expit(50 * (hi - f)) - expit(50 * (lo - f)), mu[j], sd[j], (lo, hi))
        assert got[j].item() == pytest.approx(want, abs=1e-9), (j, mu[j], sd[j], y[j])
    # the class probabilities sum to 1, and the mode is the class of largest p(y | x)
    lps = torch.stack([log_predictive(site, torch.full((mu.size,), float(k), dtype=torch.float64),
                                      torch.tensor(mu), torch.tensor(sd**2)) for k in range(1, 6)], 1)
    np.testing.assert_allclose(lps.exp().sum(1).numpy(), 1.0, atol=1e-9)
    out = metrics(site, "ordinal", torch.tensor(y, dtype=torch.float64), torch.tensor(mu), torch.tensor(sd**2))
    assert out["mze"] == pytest.approx(float(np.mean(lps.argmax(1).numpy() + 1 != y)))


def test_logistic_predictive_probabilities_vs_scipy():
    site = make_site("logistic")
    mu, sd = _cases(2)
    y = np.where(np.random.default_rng(3).random(mu.size) < 0.5, -1.0, 1.0)
    got = log_predictive(site, torch.tensor(y), torch.tensor(mu), torch.tensor(sd**2)).exp()
    for j in range(mu.size):
        want = _ref(lambda f: expit(y[j] * f), mu[j], sd[j], ())
        assert got[j].item() == pytest.approx(want, abs=1e-9)
