"""What every rule of the package shares: the callable types, float64 promotion and broadcasting, the normal
log-density, derivatives by autograd, and flat-index pickers.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import torch

LOG_2PI = math.log(2 * math.pi)
LogLik = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (y, f) -> log p(y|f), broadcasting
Derivs = Callable[[torch.Tensor, torch.Tensor], tuple]  # (y, f) -> (d/df, d2/df2) of log p(y|f)
Features = Sequence[tuple[torch.Tensor, torch.Tensor]]  # [(centre, width), ...], each broadcastable to y


def _as64(*ts):
    return tuple(t.to(torch.float64) if t.is_floating_point() else t.double() for t in ts)


def _normal_log_pdf(f, mean, var):
    return -0.5 * (LOG_2PI + torch.log(var) + (f - mean) ** 2 / var)


def _prepare(y, mu, var):
    out_dtype = torch.promote_types(mu.dtype, var.dtype)
    y, mu, var = torch.broadcast_tensors(y, mu, var)
    return y, mu, var, out_dtype


def autograd_derivs(log_lik: LogLik) -> Derivs:
    """(d/df, d2/df2) of log p(y|f) by autograd, for a likelihood without analytic derivatives."""

    def derivs(y, f):
        with torch.enable_grad():
            f = f.detach().clone().requires_grad_(True)
            (g,) = torch.autograd.grad(log_lik(y, f).sum(), f, create_graph=True)
            (h,) = torch.autograd.grad(g.sum(), f, allow_unused=True) if g.requires_grad else (None,)
        return g.detach(), (torch.zeros_like(g) if h is None else h.detach())

    return derivs


def _picker(shape, idx):
    """t -> t broadcast to `shape`, flattened, at the flat indices idx."""
    return lambda t: torch.as_tensor(t).to(torch.float64).expand(shape).reshape(-1)[idx]


def _min_width(features: Features, like: torch.Tensor) -> torch.Tensor:
    """The smallest feature width per point (1 without features), shaped like `like`."""
    width = torch.ones_like(like)
    for _, w in features:
        width = torch.minimum(width, torch.as_tensor(w).detach().to(like).expand(like.shape))
    return width


def _weighted_sum(w, vals):
    return torch.where(w > 0, w * vals, torch.zeros_like(vals)).sum(-1)
