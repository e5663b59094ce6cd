"""The Laplace approximation of the GP on the active set (GPML Algorithm 3.1 / infLaplace), used both as the
Laplace-SoD method and as every method's initialisation (paper L202; define_init_model.m).

Mode f^ of log p(y | f) + log N(f | m_U, K_M) by damped Newton with exact point derivatives of log p;
posterior N(f^, (K_M^-1 + W)^-1), W = -d^2 log p(y | f^); approximate log marginal likelihood
log q(y) = sum_i log p(y_i | f^_i) - 1/2 (f^ - m_U)^T K_M^-1 (f^ - m_U) - 1/2 log|I + W^1/2 K_M W^1/2|.
The posterior is a Gaussian on f_U, so the predictive is GGPM.predict_latent (mean m_* + k_*^T K^-1 (f^ - m_U),
variance k_** - k_*^T (K + W^-1)^-1 k_*).
"""

from __future__ import annotations

import math

import torch
from torch.nn.functional import logsigmoid

from ..gpmath.lgm import Cov
from ..gpmath.sites import LogisticSite, OrdinalSite, PoissonSite


def loglik_derivs(site, y, f):
    """log p(y | f), d/df, d^2/df^2 at points f (exact; no quadrature)."""
    if isinstance(site, PoissonSite):
        e = torch.exp(f)
        return y * f - e - torch.lgamma(y + 1.0), y - e, -e
    if isinstance(site, LogisticSite):
        s = torch.sigmoid(f)
        return logsigmoid(y * f), y * torch.sigmoid(-y * f), -s * (1 - s)
    if isinstance(site, OrdinalSite):
        lp = site.log_phi(y[:, None], f[:, None])[:, 0]
        d1 = site.derivs(y[:, None], f[:, None])[0][:, 0]
        a, b = site._ab(y[:, None], f[:, None])
        sa, sb = torch.sigmoid(a[:, 0]), torch.sigmoid(b[:, 0])
        return lp, d1, -site.slope**2 * (sa * (1 - sa) + sb * (1 - sb))
    raise TypeError(f"no Laplace derivatives for {type(site).__name__}")


def log_posterior(model, f):
    """Unnormalised log p(f | y) on the active set (SoD model, D = identity)."""
    r = f - model.mu
    return float(loglik_derivs(model.site, model.y, f)[0].sum() - 0.5 * r @ model.Sigma_solve(r))


def laplace_mode(model, f0=None, tol=1e-10, max_iters=200):
    """Newton with Armijo backtracking on Psi(f) = sum log p(y|f) - 1/2 (f-mu)^T K^-1 (f-mu); the Newton system
    (K^-1 + W) delta = grad is solved as K^1/2-preconditioned Cholesky (precision_solve)."""
    f = model.mu.clone() if f0 is None else f0.clone()
    psi = log_posterior(model, f)
    for _ in range(max_iters):
        _, d1, d2 = loglik_derivs(model.site, model.y, f)
        g = d1 - model.Sigma_solve(f - model.mu)
        if float(g.abs().max()) <= tol:
            break
        delta = model.precision_solve((-d2).clamp_min(0.0), g)
        t, slope = 1.0, float(g @ delta)
        while t > 1e-12:
            psi_new = log_posterior(model, f + t * delta)
            if math.isfinite(psi_new) and psi_new >= psi + 1e-4 * t * slope:
                break
            t *= 0.5
        f = f + t * delta
        if abs(psi_new - psi) <= 1e-14 * max(1.0, abs(psi)):
            psi = psi_new
            break
        psi = psi_new
    return f


def laplace(model, f0=None):
    """(f^, Cov of (K^-1 + W)^-1, log q(y))."""
    f = laplace_mode(model, f0)
    lp, _, d2 = loglik_derivs(model.site, model.y, f)
    W = (-d2).clamp_min(0.0)
    cov = model.fixed_point_update(W)  # (K^-1 + W)^-1, as V = A^T A
    r = f - model.mu
    # log|I + W^1/2 K W^1/2| = log|K| + log|K^-1 + W| = logdet_S - cov.logdet
    logq = float(lp.sum() - 0.5 * r @ model.Sigma_solve(r)) - 0.5 * (model.logdet_S - cov.logdet)
    return f, cov, logq


def init_from_laplace(sod, keps: float = 1e-9):
    """Upstream's init: m = f^, V = (K^-1 + W)^-1 + keps I (define_init_model.m), for the SoD / active-set model."""
    f, cov, _ = laplace(sod)
    V = cov.V + keps * sod.eye
    return f, Cov.from_chol(torch.linalg.cholesky(V))
