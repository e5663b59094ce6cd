"""KL(Q || P^theta) for the PAC-GP posteriors (Reeb et al. 2018, eqs. 8 and 10), in closed form.

Full GP (eq. 8), Q = the posterior (6) for noise sigma^2, C = K + sigma^2 I, alpha = C^{-1} y:
    KL = 1/2 ln det C - N/2 ln sigma^2 - 1/2 tr(K C^{-1}) + 1/2 alpha^T K alpha,
with tr(K C^{-1}) = N - sigma^2 tr(C^{-1}).

Sparse (eq. 10), Q(f_M) = N(a, B), P(f_M) = N(0, Kuu) (zero mean): with L = chol(Kuu) and the
whitened mean w = L^{-1} a and covariance S = L^{-1} B L^{-T} (which is B Kuu^{-1} up to similarity),
    KL = 1/2 (tr S + w^T w - M - ln det S).
"""

from __future__ import annotations

import torch

from ..gpmath.cholesky import identity_like
from ..gpmath.inverse_terms import inverse_terms


def full_gp_kl_and_marginals(K: torch.Tensor, noise: torch.Tensor, y: torch.Tensor):
    """KL of eq. (8) and Q's marginals at the training inputs, from log det C, diag(C^{-1}) and alpha:
    tr(K C^{-1}) = N - sigma^2 tr(C^{-1}), mean = K alpha,
    var_i = [K - K C^{-1} K]_ii = sigma^2 (1 - sigma^2 [C^{-1}]_ii)."""
    n = K.shape[-1]
    logdet_c, cinv_diag, alpha = inverse_terms(K + noise * identity_like(K), y)
    mean = K @ alpha
    kl = 0.5 * (logdet_c - n * torch.log(noise) - (n - noise * cinv_diag.sum()) + alpha @ mean)
    return kl, mean, (noise * (1 - noise * cinv_diag)).clamp_min(0.0)


def kl_full_gp(K: torch.Tensor, noise: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return full_gp_kl_and_marginals(K, noise, y)[0]


def kl_sparse(L: torch.Tensor, a: torch.Tensor, B_chol: torch.Tensor) -> torch.Tensor:
    """Eq. (10) for Q(f_M) = N(a, B_chol B_chol^T) (B_chol lower triangular), P(f_M) = N(0, L L^T)."""
    w = torch.linalg.solve_triangular(L, a.unsqueeze(-1), upper=False).squeeze(-1)
    W = torch.linalg.solve_triangular(L, B_chol, upper=False)
    tr = W.square().sum()
    logdet = 2.0 * (B_chol.diagonal().abs().log().sum() - L.diagonal().log().sum())
    return 0.5 * (tr + w.square().sum() - a.shape[-1] - logdet)


def kl_collapsed(t) -> torch.Tensor:
    """Eq. (10) for the FITC/VFE q(u) of eq. (11) held in models.collapsed.CollapsedTerms:
    w = L^{-1} a = LB^{-T} c and S = (LB LB^T)^{-1} = (I + A D^{-1} A^T)^{-1}, so tr S = |LB^{-1}|_F^2 and
    ln det S = -2 sum ln|diag LB|."""
    w = torch.linalg.solve_triangular(t.LB.T, t.c.unsqueeze(-1), upper=True).squeeze(-1)
    m = w.shape[-1]
    eye = torch.eye(m, dtype=w.dtype, device=w.device)
    tr = torch.linalg.solve_triangular(t.LB, eye, upper=False).square().sum()
    logdet = -2.0 * t.LB.diagonal().abs().log().sum()
    return 0.5 * (tr + w.square().sum() - m - logdet)
