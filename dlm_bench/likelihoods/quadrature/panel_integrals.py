"""The integrals by the adaptive panel rule (panels.py): E_q[log p] (and dE/dmu, dE/dvar for the LGM sites),
log E_q[p] and E_q[fn]. Points with var below POINT_MASS width^2 take the second-order expansion.
"""

from __future__ import annotations

from typing import Callable

import torch

from .common import Derivs, Features, LogLik, _as64, _picker, _prepare, _weighted_sum, autograd_derivs
from .panels import AdaptiveRule, _level_groups, _point_levels
from .rule_sums import _RuleLogSumExp, _RuleSum


def _expected_log_prob_adaptive(log_lik, y, mu, var, features, derivs, peak):
    y, mu, var, dtype = _prepare(y, mu, var)
    rule = AdaptiveRule(y, mu, var, features, tilted=peak)
    mu64, var64 = _as64(mu, var)
    log_p = log_lik(rule.y.unsqueeze(-1), rule.f)
    value = _RuleSum.apply(mu64, var64.clamp_min(1e-300), log_p, rule.f, rule.log_w)
    if bool(rule.point_mass.any()):
        d = derivs or autograd_derivs(log_lik)
        _, h = d(rule.y, mu64.detach())
        approx = log_lik(rule.y, mu64) + 0.5 * var64 * h
        value = torch.where(rule.point_mass, approx, value)
    return value.to(dtype)


def _log_marginal_panels(log_lik, y64, mu64, var64, features, d, tilted):
    rule = AdaptiveRule(y64, mu64, var64, features, tilted=tilted)
    log_p = log_lik(rule.y.unsqueeze(-1), rule.f)
    value = _RuleLogSumExp.apply(mu64, var64.clamp_min(1e-300), log_p, rule.f, rule.log_w)
    if bool(rule.point_mass.any()):
        g, h = d(rule.y, mu64.detach())
        approx = log_lik(rule.y, mu64) + 0.5 * var64 * (g * g + h)
        value = torch.where(rule.point_mass, approx, value)
    return value


def expectation(fn: Callable[[torch.Tensor], torch.Tensor], mu, var, features: Features = ()):
    """E_N(f|mu,var)[fn(f)] per point, e.g. a predictive moment."""
    _, mu, var, dtype = _prepare(torch.zeros(()), mu, var)
    rule = AdaptiveRule(torch.zeros_like(mu), mu, var, features)
    pw = torch.exp(rule.log_w + rule.log_q(mu, var))
    vals = fn(rule.f)
    value = torch.where(pw > 0, pw * vals, torch.zeros_like(vals)).sum(-1)
    if bool(rule.point_mass.any()):
        value = torch.where(rule.point_mass, fn(_as64(mu)[0]), value)
    return value.to(dtype)


# var / width^2 below which expected_log_prob_and_derivatives takes dE/dmu, dE/dvar in Stein's form, E[d log p/df] and
# E[d^2 log p/df^2]/2, instead of the score form (the integrand times (f - mu)/var, ((f - mu)^2/var^2 - 1/var)/2), whose
# terms of size |log p| / var cancel: measured on the ordinal site (slope 50), the score form's lambda is within 7e-9
# relative at var / width^2 = 1e-4, 3e-6 at 1e-6 and off by 4x at 1e-10; Stein's within 2e-10 throughout.
STEIN_RATIO = 1e-2


def expected_log_prob_and_derivatives(log_lik: LogLik, y, mu, var, features: Features = (),
                                      derivs: Derivs | None = None, by_levels: bool = True):
    """(E, dE/dmu, dE/dvar) of E = E_N(f|mu,var)[log p(y|f)]: the rule applied to the exact derivatives of
    the integrand, N (f - mu)/var and N ((f - mu)^2/var^2 - 1/var)/2 (the LGM sites); below var / width^2 =
    STEIN_RATIO, to Stein's form E[d log p/df], E[d^2 log p/df^2]/2 instead. E stays differentiable (autograd gives
    the score form's derivatives); dE/dmu and dE/dvar are returned without gradient.

    Points are integrated in groups by feature levels (`_point_levels`, `_level_groups`): a batch's levels are set
    by its widest point, and a few points with a large var / width^2 would otherwise give every point panels that
    clip to zero width (measured on an ordinal batch shaped like the SGGPM stock runs', 856 points, slope 50,
    var / width^2 from 30 to 4e4: 576 nodes a point, a median of 368 with non-zero weight). A group costs a fixed
    overhead too, so small batches stay whole. Each point's panels with non-zero width are the same either way,
    so the result is too, to rounding; by_levels=False integrates the batch in one rule (the check of that, tests
    and scripts/bench_ordinal_site.py)."""
    y, mu, var, dtype = _prepare(y, mu, var)
    if by_levels and features and y.dim() == 1 and y.numel() >= 512:  # below, the grouping costs more than it saves (measured)
        groups = _level_groups(_point_levels(mu, var, features), len(features))
        if len(groups) > 1:
            pick = _picker(mu.shape, slice(None))
            feats = [(pick(c), pick(w)) for c, w in features]
            out = [torch.empty(mu.shape, dtype=dtype, device=mu.device) for _ in range(3)]
            for idx in groups:
                part = _expected_log_prob_and_derivatives(log_lik, y[idx], mu[idx], var[idx],
                                                          [(c[idx], w[idx]) for c, w in feats], derivs)
                out = [o.index_put((idx,), p) for o, p in zip(out, part)]
            return tuple(out)
    return _expected_log_prob_and_derivatives(log_lik, y, mu, var, features, derivs)


def _expected_log_prob_and_derivatives(log_lik, y, mu, var, features, derivs):
    y, mu, var, dtype = _prepare(y, mu, var)
    rule = AdaptiveRule(y, mu, var, features)
    mu64, var64 = _as64(mu, var)
    pw = torch.exp(rule.log_w + rule.log_q(mu, var))
    log_p = log_lik(rule.y.unsqueeze(-1), rule.f)
    lp = torch.where(pw > 0, pw * log_p, torch.zeros_like(log_p))
    E = lp.sum(-1)
    with torch.no_grad():
        m, v = rule.mu.unsqueeze(-1), rule.var.unsqueeze(-1)
        lpd = lp.detach()
        z = rule.f - m
        dm = (lpd * z / v).sum(-1)
        dv = (lpd * 0.5 * (z * z / (v * v) - 1 / v)).sum(-1)
    narrow = (rule.var < STEIN_RATIO * rule.width2) & ~rule.point_mass
    if bool(narrow.any()):  # Stein's form E[g'], E[g'']/2: no cancellation (see STEIN_RATIO)
        d = derivs or autograd_derivs(log_lik)
        idx = narrow.nonzero(as_tuple=True)
        with torch.no_grad():
            g, h = d(rule.y[idx].unsqueeze(-1), rule.f[idx])
            w = pw.detach()[idx]
            dm, dv = dm.index_put(idx, _weighted_sum(w, g)), dv.index_put(idx, 0.5 * _weighted_sum(w, h))
    if bool(rule.point_mass.any()):
        d = derivs or autograd_derivs(log_lik)
        g, h = d(rule.y, rule.mu)
        E = torch.where(rule.point_mass, log_lik(rule.y, mu64) + 0.5 * var64 * h, E)
        dm = torch.where(rule.point_mass, g, dm)
        dv = torch.where(rule.point_mass, 0.5 * h, dv)
    return E.to(dtype), dm.to(dtype), dv.to(dtype)
