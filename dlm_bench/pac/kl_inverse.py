"""The upper inverse of the binary KL divergence (Reeb et al. 2018, eq. 3 and App. A).

    kl(q || p) = q ln(q/p) + (1-q) ln((1-q)/(1-p)),
    kl^{-1}(q, eps) = max{p in [0, 1] : kl(q || p) <= eps},

the unique p in [q, 1] with kl(q || p) = eps (kl is strictly increasing in p on [q, 1]). Conventions:
kl^{-1}(q, 0) = q, kl^{-1}(0, eps) = 1 - exp(-eps) (closed form), kl^{-1}(1, eps) = 1 and
kl^{-1}(q, inf) = 1.

Evaluation: bisection on [q, 1] in float64, batched over any broadcast shape, run until the bracket is
below 1e-15 (at most 200 halvings; every halving shrinks it by 2, so ~55 suffice). Gradients are the
implicit-function formulas of App. A, eqs. (12)-(13), obtained by differentiating kl(q || kl^{-1}) = eps:

    d kl^{-1}/d eps = 1 / ((1-q)/(1-p) - q/p),
    d kl^{-1}/d q   = (ln((1-q)/(1-p)) - ln(q/p)) / ((1-q)/(1-p) - q/p),   p = kl^{-1}(q, eps).

At the edges: p = 1 (q = 1 or eps = inf) has zero gradients (p is constant there); eps = 0 gives
p = q, where the formulas are 0/0 and the limits are d/dq = 1 and d/deps = +inf (kl^{-1} grows like
q + sqrt(2 q (1-q) eps)); we return 1 and a large finite slope sqrt(q(1-q)/(2 eps_min)) with
eps_min = 1e-300, so optimisers see a steep but finite slope. In the PAC-Bayes bound eps >= ln(2 sqrt(N)/delta)/N > 0,
so the edge never occurs in training.
"""

from __future__ import annotations

import torch

_TOL = 1e-15
_MAX_HALVINGS = 200


def binary_kl(q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """kl(q || p) with 0 ln 0 = 0; +inf where p is 0 or 1 and q is not."""
    q, p = torch.broadcast_tensors(torch.as_tensor(q, dtype=torch.float64), torch.as_tensor(p, dtype=torch.float64))
    a = torch.where(q > 0, q * (torch.log(q) - torch.log(p)), torch.zeros_like(q))
    b = torch.where(q < 1, (1 - q) * (torch.log1p(-q) - torch.log1p(-p)), torch.zeros_like(q))
    return a + b


@torch.no_grad()
def _solve(q: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    q = q.clamp(0.0, 1.0)
    lo = q.clone()
    hi = torch.ones_like(q)
    for _ in range(_MAX_HALVINGS):
        mid = 0.5 * (lo + hi)
        # kl(q || mid) <= eps: the root is above mid (inf when mid == 1 keeps hi)
        below = binary_kl(q, mid) <= eps
        lo = torch.where(below, mid, lo)
        hi = torch.where(below, hi, mid)
        if (hi - lo).max() <= _TOL:
            break
    p = 0.5 * (lo + hi)
    p = torch.where(q == 0, -torch.expm1(-eps), p)  # closed form at q = 0
    p = torch.where(eps == 0, q, p)
    p = torch.where((q >= 1) | torch.isinf(eps), torch.ones_like(p), p)
    return p


def _partials(q: torch.Tensor, eps: torch.Tensor, p: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(d p / d q, d p / d eps) at p = kl^{-1}(q, eps): eqs. (12)-(13) with their edge limits."""
    one = torch.ones_like(p)
    interior = (p < 1) & (eps > 0)
    ps = torch.where(interior, p, 0.5 * one)  # safe values where the formulas are not used
    qs = torch.where(interior, q, 0.25 * one)
    # denominator (1-q)/(1-p) - q/p = (p - q) / (p (1 - p)) > 0 for p > q
    denom = (ps - qs) / (ps * (1 - ps))
    log_ratio = torch.log1p(-qs) - torch.log1p(-ps) - torch.where(qs > 0, torch.log(qs) - torch.log(ps), torch.zeros_like(qs))
    dq = torch.where(interior, log_ratio / denom, torch.where(p >= 1, 0 * one, one))
    steep = torch.sqrt(q * (1 - q) / (2 * 1e-300)).clamp_min(1.0)
    deps = torch.where(interior, 1.0 / denom, torch.where(p >= 1, 0 * one, steep))
    return dq, deps


class _KLInverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, eps):
        p = _solve(q.detach(), eps.detach())
        ctx.save_for_backward(q.detach(), eps.detach(), p)
        return p

    @staticmethod
    def backward(ctx, grad):
        q, eps, p = ctx.saved_tensors
        dq, deps = _partials(q, eps, p)
        gq = grad * dq if ctx.needs_input_grad[0] else None
        ge = grad * deps if ctx.needs_input_grad[1] else None
        return gq, ge


def kl_inverse(q, eps) -> torch.Tensor:
    """kl^{-1}(q, eps) elementwise (broadcast), differentiable in both arguments (eqs. 12-13).
    q in [0, 1], eps in [0, inf]; computed in float64 and returned in q's dtype."""
    q_t = torch.as_tensor(q)
    dtype = q_t.dtype if q_t.is_floating_point() else torch.float64
    q64 = q_t.to(torch.float64)
    e64 = torch.as_tensor(eps, device=q64.device).to(torch.float64)
    if (q64 < 0).any() or (q64 > 1).any():
        raise ValueError("kl_inverse: q must be in [0, 1]")
    if (e64 < 0).any() or torch.isnan(e64).any():
        raise ValueError("kl_inverse: eps must be in [0, inf]")
    q64, e64 = torch.broadcast_tensors(q64, e64)
    return _KLInverse.apply(q64, e64).to(dtype)
