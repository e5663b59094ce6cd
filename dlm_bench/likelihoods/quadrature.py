"""Gauss-Hermite quadrature in log space for one-dimensional Gaussian expectations.

GPyTorch's `_OneDimensionalLikelihood.log_marginal` averages probabilities (exp of log p), which
underflows to log 0 = -inf when p(y|f) is tiny at every node (e.g. Poisson y = 200 far from exp(mu)).
Here every sum is a logsumexp.

* `gh_expected_log_prob`: E_N(mu,var)[log p(y|f)] with plain Gauss-Hermite (log p is smooth in f).
* `gh_log_marginal`: log E_N(mu,var)[p(y|f)] with *adaptive* Gauss-Hermite (Liu & Pierce 1994): the
  nodes are centred at the mode f* of log N(f|mu,var) + log p(y|f) with the Laplace width s, and the
  integrand is reweighted by N(f|mu,var) / N(f|f*,s^2). This is exact for Gaussian integrands and
  stays accurate when q(f) and p(y|f) are badly misaligned (a peaked likelihood in q's tail), where
  plain Gauss-Hermite nodes miss the likelihood's peak. f* and s are found without gradient (Newton
  steps); the value is differentiable in (mu, var) through the reweighting, so the result's gradient is
  the gradient of the quadrature rule with fixed nodes.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable

import numpy as np
import torch

LOG_PI_HALF = 0.5 * math.log(math.pi)
LOG_2PI = math.log(2 * math.pi)


@lru_cache(maxsize=16)
def _gh_numpy(num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.hermite.hermgauss(num_nodes)  # int e^{-x^2} g(x) dx ~ sum w g(x)
    return x, np.log(w)


def gh_nodes(num_nodes: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x, log_w = _gh_numpy(int(num_nodes))
    return (torch.as_tensor(x, dtype=like.dtype, device=like.device),
            torch.as_tensor(log_w, dtype=like.dtype, device=like.device))


LogLik = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (y, f) -> log p(y|f), broadcasting


def gh_expected_log_prob(log_lik: LogLik, y, mu, var, num_nodes: int = 20) -> torch.Tensor:
    """E_N(f|mu,var)[log p(y|f)] per point (plain Gauss-Hermite)."""
    x, log_w = gh_nodes(num_nodes, mu)
    f = mu.unsqueeze(-1) + torch.sqrt(2 * var.clamp_min(0)).unsqueeze(-1) * x
    w = torch.exp(log_w - LOG_PI_HALF)
    return (log_lik(y.unsqueeze(-1), f) * w).sum(-1)


def _normal_log_pdf(f, mean, var):
    return -0.5 * (LOG_2PI + torch.log(var) + (f - mean) ** 2 / var)


@torch.no_grad()
def laplace_centre(log_lik: LogLik, y, mu, var, iters: int = 12, derivs=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Mode f* and Laplace variance s^2 of N(f|mu,var) p(y|f), by damped Newton steps (derivatives of
    log p by autograd, elementwise). Non-log-concave likelihoods: where the curvature is not negative
    the prior curvature -1/var is used, so the steps stay ascent steps. `derivs(y, f)` -> (d/df, d2/df2) of
    log p, if given, replaces autograd (same values, much faster)."""
    mu, var = mu.detach(), var.detach().clamp_min(1e-12)
    f = mu.clone()
    y = y.detach()

    def autograd_derivs(f):
        with torch.enable_grad():
            f = f.clone().requires_grad_(True)
            lp = log_lik(y, f)
            (g,) = torch.autograd.grad(lp.sum(), f, create_graph=True)
            (h,) = torch.autograd.grad(g.sum(), f)
        return g.detach(), h.detach()

    derivs = autograd_derivs if derivs is None else (lambda f, d=derivs: d(y, f))
    for _ in range(iters):
        g, h = derivs(f)
        grad = g - (f - mu) / var
        curv = torch.minimum(h, torch.zeros_like(h)) - 1.0 / var
        step = -grad / curv
        step = step.clamp(-10 * var.sqrt() - 1.0, 10 * var.sqrt() + 1.0)  # damping far from the mode
        f = torch.where(torch.isfinite(step), f + step, f)
    _, h = derivs(f)
    s2 = -1.0 / (torch.minimum(h, torch.zeros_like(h)) - 1.0 / var)
    return f, s2


def gh_log_marginal(log_lik: LogLik, y, mu, var, num_nodes: int = 20, derivs=None) -> torch.Tensor:
    """log E_N(f|mu,var)[p(y|f)] per point (adaptive Gauss-Hermite, logsumexp)."""
    var = var.clamp_min(1e-12)
    centre, s2 = laplace_centre(log_lik, y, mu, var, derivs=derivs)
    x, log_w = gh_nodes(num_nodes, mu)
    f = centre.unsqueeze(-1) + torch.sqrt(2 * s2).unsqueeze(-1) * x
    # int q(f) p(y|f) df = int N(f|c,s2) [q p / N(f|c,s2)] df; GH for N(c, s2): (1/sqrt(pi)) sum w g(c + sqrt(2 s2) x)
    log_ratio = _normal_log_pdf(f, mu.unsqueeze(-1), var.unsqueeze(-1)) - _normal_log_pdf(
        f, centre.unsqueeze(-1), s2.unsqueeze(-1))
    return torch.logsumexp(log_w + log_lik(y.unsqueeze(-1), f) + log_ratio, dim=-1) - LOG_PI_HALF


def gh_expectation(fn: Callable[[torch.Tensor], torch.Tensor], mu, var, num_nodes: int = 20) -> torch.Tensor:
    """E_N(f|mu,var)[fn(f)] per point (plain Gauss-Hermite), e.g. the predictive mean of a count."""
    x, log_w = gh_nodes(num_nodes, mu)
    f = mu.unsqueeze(-1) + torch.sqrt(2 * var.clamp_min(0)).unsqueeze(-1) * x
    return (fn(f) * torch.exp(log_w - LOG_PI_HALF)).sum(-1)
