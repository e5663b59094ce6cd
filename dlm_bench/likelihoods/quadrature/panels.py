"""The adaptive rule: composite Gauss-Legendre on panels whose breakpoints adapt to each point.

For q(f) = N(mu, var) the integrand N(f|mu,var) g(f) (g = log p(y|f), p(y|f) or a moment) has at most three
length scales, and the panels resolve each of them where it lives:

* q itself: breakpoints mu + sd * {0, +-1.25, +-2.5, +-4, +-6, +-8.5, +-12} (the mass outside +-12 sd is 4e-33);
* the likelihood's features, given by the likelihood as (centre c, width w) pairs via `features(y)`
  (Student-t: (y, scale); probit and logistic: (0, 1); Poisson: (0, 1) and (log-rate = y, 1/sqrt(y))):
  c +- w * {0.5, 1, 2, 4, ...} (geometric: a panel never spans more than a factor 2 in distance from c,
  so power-law tails and kinks of width w are resolved at any var / w^2, from 1e-4 to 1e4 and beyond);
* for log E_q[p(y|f)] also the tilted density q(f) p(y|f): its mode c* (`tilted_mode`, a safeguarded
  Newton iteration, tilted_mode.py) and Laplace width s*: c* +- s* * {0.75, 1.5, 3, 6, 12, 24, ...}.

The breakpoints of all families are merged, clipped to the integration range (mu +- 12 sd, widened to
c* +- 12 sd for the tilted density) and sorted; every panel between two consecutive breakpoints gets
`PANEL_NODES` Gauss-Legendre nodes. Merging keeps every panel inside one panel of each family, so the
integrand is smooth on the scale of every panel (analytic in a Bernstein ellipse of parameter >= ~5 for
the likelihoods here) and the error of 8 nodes per panel is at the level of float64 round-off. The number
of geometric levels is the smallest that reaches the integration range for the whole batch, so a batch
with var ~ w^2 costs ~40 panels per point and one with var = 1e4 w^2 ~70.

Sums of log p(y|f) are weighted sums; log E_q[p] is a logsumexp over the nodes (no underflow however far
the likelihood's peak sits in q's tail). The breakpoints are computed without gradient; the value is
differentiable through the weights N(f_k|mu,var) (and through log p(y|f_k) for the likelihood's own
parameters), so its gradient in (mu, var) is the same composite rule applied to the exact derivative of
the integrand, as accurate as the value. Inputs of any floating dtype are integrated in float64 and the
result is returned in the input dtype. var below 1e-12 w^2 (q a point mass on the scale of every feature)
uses the second-order expansion log p(y|mu) + var/2 d2/df2 (E_q[log p]) or + var/2 (g^2 + d2) (log E_q[p]),
whose error is O(var^2).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from .common import Features, _as64, _normal_log_pdf

PANEL_NODES = 8  # Gauss-Legendre nodes per panel
RANGE_SD = 12.0  # integration range: mu +- RANGE_SD sd (and c* +- RANGE_SD sd for the tilted density)
Q_OFFSETS = (1.25, 2.5, 4.0, 6.0, 8.5, RANGE_SD)  # q's breakpoints mu +- sd * these (and mu)
POINT_MASS = 1e-12  # var / w^2 below which the second-order expansion is used


@lru_cache(maxsize=8)
def _legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


@lru_cache(maxsize=64)
def _offsets(kind: str, levels: int) -> np.ndarray:
    if kind == "q":
        half = np.array(Q_OFFSETS)
        return np.concatenate([-half[::-1], [0.0], half])
    first = 0.5 if kind == "feature" else 0.75
    half = first * 2.0 ** np.arange(levels)
    return np.concatenate([-half[::-1], [0.0], half])


def _levels(reach: torch.Tensor, first: float) -> int:
    """Geometric levels so that first * 2^(levels-1) >= reach (the batch's largest), between 2 and 60."""
    r = float(torch.nan_to_num(reach, nan=1.0, posinf=1e18).max()) if reach.numel() else 1.0
    return int(min(60, max(2, math.ceil(math.log2(max(r, first) / first)) + 1)))


def _feature_reach(centre, width, mu, sd, lo, hi):
    """A feature family's (c, w, ok, reach) per point: invalid features (infinite centre, zero width) become
    q's own (mu, sd); reach = how many widths the integration range [lo, hi] extends from c (1 when c is
    far outside it: only the part of the range the family can reach matters for its levels)."""
    c = torch.as_tensor(centre).detach().to(mu).expand_as(mu)
    w = torch.as_tensor(width).detach().to(mu).expand_as(mu)
    ok = torch.isfinite(c) & torch.isfinite(w) & (w > 0)
    c, w = torch.where(ok, c, mu), torch.where(ok, w, sd)
    reach = torch.maximum((hi - c).abs(), (c - lo).abs()) / w
    reach = torch.where((c > lo - 4096 * (hi - lo)) & (c < hi + 4096 * (hi - lo)), reach, 1.0)
    return c, w, ok, reach


def _point_levels(mu, var, features: Features) -> torch.Tensor:
    """The feature levels each point's own range needs (`_levels` per point, the largest over the families)."""
    with torch.no_grad():
        mu, var = _as64(mu.detach(), var.detach())
        sd = var.clamp_min(1e-300).sqrt()
        lo, hi = mu - RANGE_SD * sd, mu + RANGE_SD * sd
        out = torch.full(mu.shape, 2, dtype=torch.long, device=mu.device)
        for centre, width in features:
            reach = torch.nan_to_num(_feature_reach(centre, width, mu, sd, lo, hi)[3], nan=1.0, posinf=1e18)
            out = torch.maximum(out, (torch.log2(reach.clamp_min(0.5) / 0.5).ceil() + 1).clamp(2, 60).long())
        return out


class AdaptiveRule:
    """Nodes f (..., K) and log-weights (..., K), without gradient, of the composite rule for one batch of
    q(f) = N(mu, var) (shapes broadcast), plus what the integrands need. See the module docstring."""

    def __init__(self, y, mu, var, features: Features = (), tilted: tuple | None = None):
        with torch.no_grad():
            y, mu, var = torch.broadcast_tensors(*_as64(y.detach(), mu.detach(), var.detach()))
            var = var.clamp_min(1e-300)
            sd = var.sqrt()
            lo, hi = mu - RANGE_SD * sd, mu + RANGE_SD * sd
            parts = [mu.unsqueeze(-1) + sd.unsqueeze(-1) * torch.as_tensor(_offsets("q", 0)).to(mu)]
            min_w = torch.full_like(mu, math.inf)
            if tilted is not None:
                c, s2 = (t.detach().to(mu).expand_as(mu) for t in tilted)
                s = s2.clamp_min(0).sqrt()
                c = torch.where(torch.isfinite(c), c, mu)
                lo, hi = torch.minimum(lo, c - RANGE_SD * sd), torch.maximum(hi, c + RANGE_SD * sd)
                levels = _levels((hi - lo) / s.clamp_min(1e-300), 0.75)
                parts.append(c.unsqueeze(-1) + s.unsqueeze(-1) * torch.as_tensor(_offsets("tilted", levels)).to(mu))
            for centre, width in features:
                c, w, ok, reach = _feature_reach(centre, width, mu, sd, lo, hi)
                min_w = torch.minimum(min_w, torch.where(ok, w, min_w))
                levels = _levels(reach, 0.5)
                parts.append(c.unsqueeze(-1) + w.unsqueeze(-1) * torch.as_tensor(_offsets("feature", levels)).to(mu))
            bps = torch.cat(parts, -1)
            bps = torch.maximum(torch.minimum(bps, hi.unsqueeze(-1)), lo.unsqueeze(-1))
            bps = torch.cat([lo.unsqueeze(-1), bps, hi.unsqueeze(-1)], -1).sort(-1).values
            x, w = (torch.as_tensor(a).to(mu) for a in _legendre(PANEL_NODES))
            a, b = bps[..., :-1], bps[..., 1:]
            half = (0.5 * (b - a)).unsqueeze(-1)
            f = (0.5 * (a + b)).unsqueeze(-1) + half * x
            self.f = f.flatten(-2)
            self.log_w = (torch.log(half) + torch.log(w)).flatten(-2)  # -inf on zero-width panels
            self.y, self.mu, self.var = y, mu, var
            self.width2 = torch.where(torch.isfinite(min_w), min_w, 1.0) ** 2  # the narrowest feature's width^2
            self.point_mass = var < POINT_MASS * self.width2

    def log_q(self, mu, var):
        """log N(f_k | mu, var) at the nodes, differentiable in (mu, var) (float64)."""
        mu, var = _as64(mu, var)
        var = var.clamp_min(1e-300)
        return _normal_log_pdf(self.f, mu.unsqueeze(-1), var.unsqueeze(-1))


# The fixed cost of one more group, in node evaluations: ~0.7 ms a call against ~0.045 us a node (one thread,
# the ordinal site; measured 2026-11-25, docs/performance.md "Ordinal site expectations")
GROUP_OVERHEAD_NODES = 20000


def _level_groups(levels: torch.Tensor, num_features: int) -> list[torch.Tensor]:
    """Index sets that partition the points by contiguous ranges of their levels, chosen to minimise the nodes
    evaluated plus GROUP_OVERHEAD_NODES a group (a dynamic programme over the distinct levels, at most 60)."""
    vals, counts = torch.unique(levels, return_counts=True)
    vals, counts = vals.tolist(), counts.tolist()
    k = len(vals)

    def nodes(level):  # per point: q's panels plus each feature family's 2 * level + 1 breakpoints
        return PANEL_NODES * (2 * len(Q_OFFSETS) + 2 + num_features * (2 * level + 1))

    best, cut = [0.0] + [math.inf] * k, [0] * (k + 1)
    for j in range(1, k + 1):
        for i in range(j):
            cost = best[i] + sum(counts[i:j]) * nodes(vals[j - 1]) + GROUP_OVERHEAD_NODES
            if cost < best[j]:
                best[j], cut[j] = cost, i
    bounds, j = [], k
    while j > 0:
        bounds.append((vals[cut[j]], vals[j - 1]))
        j = cut[j]
    return [((levels >= lo) & (levels <= hi)).nonzero().squeeze(-1) for lo, hi in reversed(bounds)]
