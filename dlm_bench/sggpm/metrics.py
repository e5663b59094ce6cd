"""Predictive distributions and upstream's error metrics (compute_error_metric.m):
MFE = mean over y != 0 of |y - y^| / y with y^ the predictive mean (counts); MZE = zero-one error with the
predictive mode (binary: p(y_true | x) < 1/2; ordinal: mode != y); MNLPD = mean -log p(y | x).
p(y | x) = int p(y | f) N(f | mu_*, s2_*) df by Gauss-Hermite (64 nodes), in log space."""

from __future__ import annotations

import math

import numpy as np
import scipy.special
import torch
from torch.nn.functional import logsigmoid

from ..lgm.sites import LogisticSite, OrdinalSite, PoissonSite

_X, _W = scipy.special.roots_hermitenorm(64)
_LOGW = torch.as_tensor(np.log(_W / _W.sum()), dtype=torch.float64)
_XN = torch.as_tensor(_X, dtype=torch.float64)


def _lse(logp):  # logp: (n, nodes)
    return torch.logsumexp(logp + _LOGW, dim=1)


def log_predictive(site, y, mu, var):
    f = mu[:, None] + torch.sqrt(var)[:, None] * _XN
    if isinstance(site, PoissonSite):
        lp = y[:, None] * f - torch.exp(f) - torch.lgamma(y + 1.0)[:, None]
    elif isinstance(site, LogisticSite):
        lp = logsigmoid(y[:, None] * f)
    else:
        lp = site.log_phi(y[:, None], f)
    return _lse(lp)


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
