"""SGGPM predictive probabilities p(y | x) = int p(y | f) N(f | mu, s2) df (gpmath/sites.py `log_predictive`, used by
sggpm/metrics.py) against scipy's
adaptive quad split at the likelihood's kinks: the ordinal site at upstream's slope 50 (steps 1/50 wide) and the
logistic site, predictive sd from 0.05 to 3. Gauss-Hermite-64, used before, is off by up to 0.1 here."""

import math

import numpy as np
import pytest
import torch
from scipy.integrate import quad
from scipy.special import expit
from scipy.stats import norm

from dlm_bench.gpmath.sites import make_site
from dlm_bench.sggpm.metrics import metrics

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
    got = site.log_predictive(torch.tensor(y, dtype=torch.float64), torch.tensor(mu), torch.tensor(sd**2)).exp()
    for j in range(mu.size):
        lo, hi = ([-np.inf] + THETA)[y[j] - 1], (THETA + [np.inf])[y[j] - 1]
        want = _ref(lambda f: expit(50 * (hi - f)) - expit(50 * (lo - f)), mu[j], sd[j], (lo, hi))
        assert got[j].item() == pytest.approx(want, abs=1e-9), (j, mu[j], sd[j], y[j])
    # the class probabilities sum to 1, and the mode is the class of largest p(y | x)
    lps = torch.stack([site.log_predictive(torch.full((mu.size,), float(k), dtype=torch.float64),
                                      torch.tensor(mu), torch.tensor(sd**2)) for k in range(1, 6)], 1)
    np.testing.assert_allclose(lps.exp().sum(1).numpy(), 1.0, atol=1e-9)
    out = metrics(site, "ordinal", torch.tensor(y, dtype=torch.float64), torch.tensor(mu), torch.tensor(sd**2))
    assert out["mze"] == pytest.approx(float(np.mean(lps.argmax(1).numpy() + 1 != y)))


def test_logistic_predictive_probabilities_vs_scipy():
    site = make_site("logistic")
    mu, sd = _cases(2)
    y = np.where(np.random.default_rng(3).random(mu.size) < 0.5, -1.0, 1.0)
    got = site.log_predictive(torch.tensor(y), torch.tensor(mu), torch.tensor(sd**2)).exp()
    for j in range(mu.size):
        want = _ref(lambda f: expit(y[j] * f), mu[j], sd[j], ())
        assert got[j].item() == pytest.approx(want, abs=1e-9)


def test_poisson_predictive_probabilities_vs_scipy():
    """Counts up to 150, some far in q's tail, predictive sd 0.05-3 (Gauss-Hermite-64 was off by 0.8 nats at
    y = 15, sd 2.4, and by 3.9 nats at y = 150, sd 0.05)."""
    from scipy.special import gammaln

    site = make_site("poisson")
    rng = np.random.default_rng(6)
    mu, sd = rng.normal(1.5, 1.0, 30), np.exp(rng.uniform(math.log(0.05), math.log(3.0), 30))
    y = np.concatenate([rng.poisson(np.exp(mu[:24])), [15.0, 40.0, 150.0, 0.0, 1.0, 150.0]])
    mu[24], sd[24], sd[26], mu[26] = 2.741, 2.437, 0.05, 2.0
    got = site.log_predictive(torch.tensor(y, dtype=torch.float64), torch.tensor(mu), torch.tensor(sd**2))
    for j in range(mu.size):
        def logp(f, yy=y[j]):
            return yy * f - np.exp(f) - gammaln(yy + 1)
        # the integrand peaks where N(f) p(y|f) does: Laplace centre by a few Newton steps, then quad around it
        c = mu[j]
        for _ in range(100):
            c -= (y[j] - np.exp(c) - (c - mu[j]) / sd[j] ** 2) / (-np.exp(c) - 1 / sd[j] ** 2)
        s = 1 / math.sqrt(np.exp(c) + 1 / sd[j] ** 2)
        peak = logp(c) + norm.logpdf(c, mu[j], sd[j])
        val = quad(lambda f: math.exp(logp(f) + norm.logpdf(f, mu[j], sd[j]) - peak), c - 40 * s, c + 40 * s,
                   epsabs=0, epsrel=1e-12, limit=400, points=[c])[0]
        assert got[j].item() == pytest.approx(peak + math.log(val), abs=1e-8), (j, y[j], mu[j], sd[j])
