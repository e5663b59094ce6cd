"""Samples from the tilted density q(f) p(y|f) on the panel rule's grid (the uPS estimator's exact fallback,
estimators/ups.py).
"""

from __future__ import annotations

import math

import torch

from .common import Derivs, Features, LogLik, _as64, _normal_log_pdf, autograd_derivs
from .panels import PANEL_NODES, AdaptiveRule, _legendre
from .tilted_mode import tilted_mode


@torch.no_grad()
def sample_tilted(log_lik: LogLik, y, mu, var, num: int, features: Features = (), derivs: Derivs | None = None,
                  cells: int = 64, generator=None):
    """Exact-to-the-grid samples from q~(f) ∝ N(f|mu,var) p(y|f): inverse CDF of the piecewise log-linear
    interpolant of the tilted density on the rule's panels, each cut into `cells` equal cells. y, mu, var: (N,);
    returns (num, N). The interpolant's relative error is O((h/l)^2) for cells of width h on a density with
    length scale l (h <= 1.5 sd / 64 and w / 128 here), far below what a KS test at 1e5 samples can see."""
    y, mu, var = torch.broadcast_tensors(*_as64(y, mu, var))
    d = derivs or autograd_derivs(log_lik)
    centre = tilted_mode(log_lik, d, y, mu, var.clamp_min(1e-300))
    rule = AdaptiveRule(y, mu, var, features, tilted=centre)
    P = PANEL_NODES
    # panel edges from the nodes: recover a, b of every panel (the rule's breakpoints)
    x = torch.as_tensor(_legendre(P)[0]).to(mu)
    f = rule.f.unflatten(-1, (-1, P))
    half = (f[..., -1] - f[..., 0]) / (x[-1] - x[0])
    mid = f[..., 0] - half * x[0]
    a, b = mid - half, mid + half
    t = torch.linspace(0, 1, cells + 1, dtype=mu.dtype)
    edges = (a.unsqueeze(-1) + (b - a).unsqueeze(-1) * t).flatten(-2)  # (N, panels * (cells + 1))
    e0 = edges.unflatten(-1, (-1, cells + 1))[..., :-1].flatten(-2)
    e1 = edges.unflatten(-1, (-1, cells + 1))[..., 1:].flatten(-2)
    l0 = log_lik(y.unsqueeze(-1), e0) + _normal_log_pdf(e0, mu.unsqueeze(-1), var.unsqueeze(-1))
    l1 = log_lik(y.unsqueeze(-1), e1) + _normal_log_pdf(e1, mu.unsqueeze(-1), var.unsqueeze(-1))
    h = e1 - e0
    D = (l1 - l0).abs()
    top = torch.maximum(l0, l1)
    # log of the cell's mass: log h + top + log((1 - exp(-D)) / D)
    shape_term = torch.where(D > 1e-12, torch.log(-torch.expm1(-D)) - torch.log(D.clamp_min(1e-300)), -0.5 * D)
    log_mass = torch.where(h > 0, torch.log(h.clamp_min(1e-300)) + top + shape_term,
                           torch.full_like(h, -math.inf))
    log_mass = torch.nan_to_num(log_mass, nan=-math.inf)
    probs = torch.exp(log_mass - log_mass.max(-1, keepdim=True).values)
    cdf = probs.cumsum(-1)
    cdf = cdf / cdf[..., -1:]
    u = torch.rand((y.shape[0], num), dtype=mu.dtype, generator=generator)
    k = torch.searchsorted(cdf, u).clamp_max(cdf.shape[-1] - 1)
    v = torch.rand((y.shape[0], num), dtype=mu.dtype, generator=generator)
    hk, Dk = h.gather(-1, k), D.gather(-1, k)
    # distance from the cell's higher end, density ∝ exp(-D x / h): x = -h log1p(v expm1(-D)) / D
    xk = torch.where(Dk > 1e-12, -hk * torch.log1p(v * torch.expm1(-Dk)) / Dk.clamp_min(1e-300), v * hk)
    decreasing = l0.gather(-1, k) >= l1.gather(-1, k)
    out = torch.where(decreasing, e0.gather(-1, k) + xk, e1.gather(-1, k) - xk)
    return out.T
