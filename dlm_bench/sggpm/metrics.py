"""Predictive distributions and upstream's error metrics (compute_error_metric.m):
MFE = mean over y != 0 of |y - y^| / y with y^ the predictive mean (counts); MZE = zero-one error with the
predictive mode (binary: p(y_true | x) < 1/2; ordinal: mode != y); MNLPD = mean -log p(y | x).
p(y | x) = int p(y | f) N(f | mu_*, s2_*) df in log space, by the site (gpmath/sites.py `log_predictive`: the likelihood
layer's rule, likelihoods/quadrature/ `log_marginal`, with the likelihood's features). Until 2026-11-25 it was
Gauss-Hermite with 64 nodes, which is off by up to 0.1 in p(y | x) for the ordinal sites (slope 50: steps 1/50
wide) at a predictive sd of 1-3, and for counts by up to 0.8 nats once sd >= 0.3 with y >= 15
(tests/unit/sggpm/test_sggpm_metrics.py)."""

from __future__ import annotations

import math

import torch


def metrics(site, task: str, y, mu, var) -> dict:
    """y: targets in the model's coding (binary -1/+1, ordinal 1..L, counts)."""
    nlpd = -site.log_predictive(y, mu, var)
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
        lps = torch.stack([site.log_predictive(torch.full_like(y, k), mu, var) for k in range(1, L + 1)], 1)
        mode = lps.argmax(1) + 1
        out["mze"] = float((mode != y.long()).double().mean())
    return out
