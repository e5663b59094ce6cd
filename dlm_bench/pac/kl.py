"""KL(Q || P^theta) for the PAC-GP posteriors (Reeb et al. 2018, eqs. 8 and 10), in closed form.

Full GP (eq. 8), Q = the posterior (6) for noise sigma^2, C = K + sigma^2 I, alpha = C^{-1} y:
    KL = 1/2 ln det C - N/2 ln sigma^2 - 1/2 tr(K C^{-1}) + 1/2 alpha^T K alpha,
with tr(K C^{-1}) = N - sigma^2 tr(C^{-1}).

Sparse (eq. 10), Q(f_M) = N(a, B), P(f_M) = N(0, Kuu) (zero mean): with L = chol(Kuu) and the
whitened mean w = L^{-1} a and covariance S = L^{-1} B L^{-T} (which is B Kuu^{-1} up to similarity),
    KL = 1/2 (tr S + w^T w - M - ln det S).
`kl_whitened(w, S_chol=...)` takes a Cholesky-like factor F of S (S = F F^T, ln det S = 2 sum ln|diag F|
only for triangular F), or `S_inv_chol` = a lower-triangular G with S = (G G^T)^{-1} (the collapsed
FITC/VFE q(u) of eq. 11: S = (I + A D^{-1} A^T)^{-1}).
"""

from __future__ import annotations

import torch

from ..gpmath.cholesky import jittered_cholesky


def kl_full_gp(K: torch.Tensor, noise: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n = K.shape[-1]
    Lc, eye = jittered_cholesky(K, noise)
    alpha = torch.cholesky_solve(y.unsqueeze(-1), Lc).squeeze(-1)
    logdet_c = 2.0 * Lc.diagonal().log().sum()
    Linv = torch.linalg.solve_triangular(Lc, eye, upper=False)
    tr_cinv = Linv.square().sum()
    tr_kcinv = n - noise * tr_cinv
    quad = alpha @ (K @ alpha)
    return 0.5 * (logdet_c - n * torch.log(noise) - tr_kcinv + quad)


def kl_whitened(w: torch.Tensor, S_chol: torch.Tensor | None = None, S_inv_chol: torch.Tensor | None = None) -> torch.Tensor:
    """KL(N(w, S) || N(0, I)) with S given by a lower-triangular factor of S or of S^{-1}."""
    m = w.shape[-1]
    if (S_chol is None) == (S_inv_chol is None):
        raise ValueError("give exactly one of S_chol, S_inv_chol")
    if S_chol is not None:
        tr = S_chol.square().sum()
        logdet = 2.0 * S_chol.diagonal().abs().log().sum()
    else:
        eye = torch.eye(m, dtype=w.dtype, device=w.device)
        Ginv = torch.linalg.solve_triangular(S_inv_chol, eye, upper=False)
        tr = Ginv.square().sum()
        logdet = -2.0 * S_inv_chol.diagonal().abs().log().sum()
    return 0.5 * (tr + w.square().sum() - m - logdet)


def kl_sparse(L: torch.Tensor, a: torch.Tensor, B_chol: torch.Tensor) -> torch.Tensor:
    """Eq. (10) for Q(f_M) = N(a, B_chol B_chol^T) (B_chol lower triangular), P(f_M) = N(0, L L^T)."""
    w = torch.linalg.solve_triangular(L, a.unsqueeze(-1), upper=False).squeeze(-1)
    W = torch.linalg.solve_triangular(L, B_chol, upper=False)
    tr = W.square().sum()
    logdet = 2.0 * (B_chol.diagonal().abs().log().sum() - L.diagonal().log().sum())
    return 0.5 * (tr + w.square().sum() - a.shape[-1] - logdet)


def kl_collapsed(t) -> torch.Tensor:
    """Eq. (10) for the FITC/VFE q(u) of eq. (11) held in models.collapsed.CollapsedTerms:
    L^{-1} a = LB^{-T} c and S = (LB LB^T)^{-1}."""
    w = torch.linalg.solve_triangular(t.LB.T, t.c.unsqueeze(-1), upper=True).squeeze(-1)
    return kl_whitened(w, S_inv_chol=t.LB)


__all__ = ["kl_full_gp", "kl_whitened", "kl_sparse", "kl_collapsed"]
