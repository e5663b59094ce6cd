"""Plain Gauss-Hermite for E_q[log p] of likelihoods analytic in a strip around the real axis (probit, logistic)
at small var / width^2 (`expected_log_prob`'s `hermite_tiers`); the points past the last tier take the panel rule.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from .common import _as64, _min_width, _picker, _prepare
from .panel_integrals import _expected_log_prob_adaptive
from .panels import POINT_MASS


@lru_cache(maxsize=16)
def _hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes x_k and weights w_k / sqrt(pi) for E_N(f|mu,var)[g] = sum_k w_k g(mu + sqrt(2 var) x_k)."""
    x, w = np.polynomial.hermite.hermgauss(n)
    return x, w / math.sqrt(math.pi)


class _HermiteSum(torch.autograd.Function):
    """sum_k w_k log_p_k per point (log_p: (P, K) at f_k = mu + sqrt(2 var) x_k), with the analytic backward of
    the score form: d/dmu = sum_k w_k log_p_k x_k sqrt(2/var), d/dvar = sum_k w_k log_p_k (x_k^2 - 1/2)/var
    (E[g (f-mu)/var] and E[g ((f-mu)^2/var^2 - 1/var)/2] by the same rule), so the nodes carry no graph and
    the whole rule is three matrix-vector products."""

    @staticmethod
    def forward(ctx, mu, var, log_p, x, w):
        ctx.save_for_backward(log_p, x, w, var)
        return log_p @ w

    @staticmethod
    def backward(ctx, g):
        log_p, x, w, var = ctx.saved_tensors
        d_mu = (log_p @ (w * x)) * torch.sqrt(2 / var)
        d_var = (log_p @ (w * (x * x - 0.5))) / var
        d_logp = g.unsqueeze(-1) * w if ctx.needs_input_grad[2] else None
        return g * d_mu, g * d_var, d_logp, None, None


def _hermite_group(log_lik, y, mu, var, n: int):
    """E_q[log p] of a flat group of points by the n-node Gauss-Hermite rule."""
    x, w = (torch.as_tensor(a).to(mu) for a in _hermite(n))
    with torch.no_grad():
        f = mu.detach().unsqueeze(-1) + torch.sqrt(2 * var.detach()).unsqueeze(-1) * x
    return _HermiteSum.apply(mu, var, log_lik(y.unsqueeze(-1), f), x, w)


def _expected_log_prob_hermite(log_lik, y, mu, var, features, derivs, tiers):
    """Each point in the group of the fewest nodes that cover its var / width^2 (so one wide point does not make
    the whole batch pay for 64 nodes); points past the last tier (and point masses) take the adaptive rule."""
    y, mu, var, dtype = _prepare(y, mu, var)
    shape = mu.shape
    y64, mu64, var64 = (t.reshape(-1) for t in _as64(y, mu, var))
    with torch.no_grad():
        ratio = var64.detach() / _min_width(features, var.detach().to(torch.float64)).reshape(-1) ** 2
        limits = torch.tensor([limit for _, limit in tiers], dtype=torch.float64, device=ratio.device)
        group = torch.searchsorted(limits, ratio)  # tier index; len(tiers): the adaptive rule
        group = torch.where((ratio >= POINT_MASS) & torch.isfinite(mu64.detach()) & torch.isfinite(ratio),
                            group, len(tiers))
        present = torch.unique(group).tolist()
    if present == [len(tiers)]:
        return _expected_log_prob_adaptive(log_lik, y, mu, var, features, derivs, None)
    if len(present) == 1:
        return _hermite_group(log_lik, y64, mu64, var64, tiers[present[0]][0]).reshape(shape).to(dtype)
    out = torch.zeros(mu64.shape, dtype=torch.float64, device=mu64.device)
    for k in present:
        idx = (group == k).nonzero().squeeze(-1)
        if k < len(tiers):
            val = _hermite_group(log_lik, y64[idx], mu64[idx], var64[idx], tiers[k][0])
        else:
            pick = _picker(shape, idx)
            val = _expected_log_prob_adaptive(log_lik, y64[idx], mu64[idx], var64[idx],
                                              [(pick(c), pick(w)) for c, w in features], derivs, None)
        out = out.index_put((idx,), val)
    return out.reshape(shape).to(dtype)
