"""Predictive distributions and upstream's error metrics (compute_error_metric.m):
MFE = mean over y != 0 of |y - y^| / y with y^ the predictive mean (counts); MZE = zero-one error with the
predictive mode (binary: p(y_true | x) < 1/2; ordinal: mode != y); MNLPD = mean -log p(y | x).
p(y | x) = int p(y | f) N(f | mu_*, s2_*) df in log space: counts by Gauss-Hermite (64 nodes); binary and ordinal
by the likelihood layer's rule (likelihoods/quadrature.py `log_marginal`, with the site's features). Until
2026-11-25 these also used Gauss-Hermite-64, which is off by up to 0.1 in p(y | x) for the ordinal sites (slope 50:
steps 1/50 wide) at a predictive sd of 1-3 and by 1e-2 at 0.2-0.5 (tests/unit/test_sggpm_metrics.py)."""

from __future__ import annotations

import math

import numpy as np
import scipy.special
import torch

from ..lgm.sites import PoissonSite
from ..likelihoods import quadrature as quad

_X, _W = scipy.special.roots_hermitenorm(64)
_LOGW = torch.as_tensor(np.log(_W / _W.sum()), dtype=torch.float64)
_XN = torch.as_tensor(_X, dtype=torch.float64)


def _lse(logp):  # logp: (n, nodes)
    return torch.logsumexp(logp + _LOGW, dim=1)


def log_predictive(site, y, mu, var):
    if isinstance(site, PoissonSite):
        f = mu[:, None] + torch.sqrt(var)[:, None] * _XN
        return _lse(y[:, None] * f - torch.exp(f) - torch.lgamma(y + 1.0)[:, None])
    # LogisticSite, OrdinalSite: log-concave in f
    return quad.log_marginal(site.log_phi, y, mu, var, site.features(y), site.derivs, laplace_hermite=True)


def metrics(site, task: str, y, mu, var) -> dict:
    """y: targets in the model's coding (binary -1/+1, ordinal 1..L, counts)."""
    nlpd = -log_predictive(site, y, mu, var)
    out = {"mnlpd": float(nlpd.mean())}
    if task == "count":
        yhat = torch.exp(mu + 0.5 * var)
        nz = y != 0
        out["mfe"] = float(((y[nz] - yhat[nz]).abs() / y[nz]).mean()) if bool(nz.any()) else math.nan
        out["mae"] = float((y - yhat).abs().mean())
    elif task == "binary":
        out["mze"] = float((torch.exp(-nlpd) < 0.5).double().mean())
    else:
        L = site.theta.numel() - 1
        lps = torch.stack([log_predictive(site, torch.full_like(y, k), mu, var) for k in range(1, L + 1)], 1)
        mode = lps.argmax(1) + 1
        out["mze"] = float((mode != y.long()).double().mean())
    return out
