"""The extended latent Gaussian model (Sheth & Khardon 2016, eq. 4) and its VLB (eq. 3).

w ~ N(mu, Sigma), q(w) = N(m, V), marginals m_qi = a_i + d_i^T m, v_qi = c_i + d_i^T V d_i:
  GLM        d_i = x_i, a = c = 0, Sigma = s I
  full GP    d_i = e_i, a = c = 0, Sigma = K            (D stored as None: the identity)
  sparse GP  d_i = K_uu^-1 k_ui, a_i = 0 (zero mean), c_i = K_ii - k_iu K_uu^-1 k_ui, Sigma = K_uu

A covariance V is carried as a factor W with V = W^T W plus log|V| (class Cov): for V = L L^T (Cholesky)
W = L^T; for V = T(V_old) = L_S A^-1 L_S^T (A = I + L_S^T D^T Gamma D L_S) W = L_A^-1 L_S^T, so the FP
operator never forms an inverse nor factorises an ill-conditioned T(V). Only Cholesky factors and
triangular / Cholesky solves are used.

The core of both LGM-based papers: the FP paper's optimisers (the package dlm_bench/lgm/, not this module) and the
sparse GGPMs (sggpm/) build on this module, its sites (gpmath/sites.py) and newton_step; neither imports the other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .cholesky import grown_cholesky
from .kernels import rbf
from .sites import Site

tri = torch.linalg.solve_triangular


@dataclass
class Cov:
    """V = W^T W with log|V| (W square, not necessarily triangular)."""

    W: torch.Tensor
    logdet: float

    @staticmethod
    def from_chol(L: torch.Tensor) -> "Cov":
        return Cov(L.T, float(2 * torch.log(torch.abs(L.diagonal())).sum()))

    @property
    def V(self) -> torch.Tensor:
        return self.W.T @ self.W


@dataclass
class Sites:
    E: torch.Tensor
    rho: torch.Tensor
    lam: torch.Tensor
    mq: torch.Tensor
    vq: torch.Tensor


class LGM:
    def __init__(self, y, site: Site, mu, L_Sigma, D=None, a=None, c=None, kind: str = "glm"):
        self.y, self.site, self.mu, self.L_S, self.D = y, site, mu, L_Sigma, D
        self.n = L_Sigma.shape[0]
        self.N = y.shape[0]
        z = torch.zeros(self.N, dtype=y.dtype)
        self.a = z if a is None else a
        self.c = z if c is None else c
        self.kind = kind
        self.logdet_S = float(2 * torch.log(L_Sigma.diagonal()).sum())
        self.eye = torch.eye(self.n, dtype=y.dtype)

    # -- building blocks ------------------------------------------------------------------------------
    def Dm(self, m):
        return m if self.D is None else self.D @ m

    def Dt(self, r):
        return r if self.D is None else self.D.T @ r

    def DtGD(self, g):
        """D^T diag(g) D."""
        return torch.diag(g) if self.D is None else (self.D.T * g) @ self.D

    def Sigma_solve(self, B):
        return torch.cholesky_solve(B if B.dim() == 2 else B[:, None], self.L_S).reshape(B.shape)

    def marginals(self, m, cov: Cov):
        WD = cov.W if self.D is None else cov.W @ self.D.T
        return self.a + self.Dm(m), self.c + (WD * WD).sum(0)

    def marginals_chol(self, m, L):
        DL = L if self.D is None else self.D @ L
        return self.a + self.Dm(m), self.c + (DL * DL).sum(1)

    def site_expectations(self, mq, vq) -> Sites:
        E, rho, lam = self.site.site_expectations(self.y, mq, vq)
        return Sites(E, rho, lam, mq, vq)

    def gamma(self, s: Sites):
        g = -s.lam
        return g.clamp_min(0.0) if self.site.clip_gamma else g  # paper L155: gamma < 0 clipped (Student-t)

    # -- VLB (eq. 3) -------------------------------------------------------------------------------------
    def kl(self, m, cov: Cov) -> torch.Tensor:
        r = m - self.mu
        maha = r @ self.Sigma_solve(r)
        tr = (tri(self.L_S, cov.W.T, upper=False) ** 2).sum()  # tr(Sigma^-1 W^T W)
        return 0.5 * (tr + maha - self.n + self.logdet_S - cov.logdet)

    def vlb(self, m, cov: Cov) -> float:
        s = self.site_expectations(*self.marginals(m, cov))
        return float(s.E.sum() - self.kl(m, cov))

    def vlb_grad_chol(self, m, L):
        """VLB and its gradients in m and in the lower-triangular L (eq. 5 with dV = dL L^T + L dL^T):
        dF/dm = D^T rho - Sigma^-1 (m - mu);  dF/dL = tril(D^T diag(lam) D L - Sigma^-1 L + diag(1/L_ii))."""
        mq, vq = self.marginals_chol(m, L)
        s = self.site_expectations(mq, vq)
        r = m - self.mu
        Sr = self.Sigma_solve(r)
        X = tri(self.L_S, L, upper=False)
        logdet_V = 2 * torch.log(torch.abs(L.diagonal())).sum()
        F = s.E.sum() - 0.5 * ((X * X).sum() + r @ Sr - self.n + self.logdet_S - logdet_V)
        gm = self.Dt(s.rho) - Sr
        DL = L if self.D is None else self.D @ L
        gL = self.Dt(s.lam[:, None] * DL) - tri(self.L_S.T, X, upper=True) + torch.diag(1.0 / L.diagonal())
        return float(F), gm, torch.tril(gL)

    # -- FP operator (eq. 8) and Newton direction ----------------------------------------------------------
    def _A_chol(self, gamma):
        B = self.L_S if self.D is None else self.D @ self.L_S  # rows d_i^T L_S
        return torch.linalg.cholesky(self.eye + (B.T * gamma) @ B)

    def precision_solve(self, gamma, b):
        """(Sigma^-1 + D^T diag(gamma) D)^-1 b = L_S A^-1 L_S^T b, gamma >= 0."""
        LA = self._A_chol(gamma)
        return self.L_S @ torch.cholesky_solve((self.L_S.T @ b)[:, None], LA)[:, 0]

    def fixed_point_update(self, gamma) -> Cov:
        """T(V) = (Sigma^-1 + sum_i gamma_i d_i d_i^T)^-1 (eq. 8), gamma evaluated at the current (m, V)."""
        LA = self._A_chol(gamma)
        W = tri(LA, self.L_S.T, upper=False)
        logdet = self.logdet_S - float(2 * torch.log(LA.diagonal()).sum())
        return Cov(W, logdet)

    def prior_cov(self) -> Cov:
        return Cov(self.L_S.T.clone(), self.logdet_S)


def newton_step(model: LGM, m, cov: Cov, vq, armijo=1e-4, max_halvings=40):
    """One damped Newton step on m at fixed V: direction (Sigma^-1 + D^T Gamma D)^-1 dF/dm with
    Gamma = max(-lam, 0), then Armijo backtracking on F(m) = sum_i E_i - 1/2 (m-mu)^T Sigma^-1 (m-mu)."""

    def f_m(mm):
        s = model.site_expectations(model.a + model.Dm(mm), vq)
        r = mm - model.mu
        Sr = model.Sigma_solve(r)
        return float(s.E.sum() - 0.5 * r @ Sr), s, Sr

    F0, s, Sr = f_m(m)
    g = model.Dt(s.rho) - Sr
    gamma = (-s.lam).clamp_min(0.0)
    delta = model.precision_solve(gamma, g)
    slope = float(g @ delta)
    t = 1.0
    for _ in range(max_halvings):
        m_new = m + t * delta
        F1, _, _ = f_m(m_new)
        if np.isfinite(F1) and F1 >= F0 + armijo * t * slope:
            return m_new, F1 - F0
        t *= 0.5
    return m, 0.0


# -- model constructors ---------------------------------------------------------------------------------
def glm(X, y, site, prior_var: float) -> LGM:
    n = X.shape[1]
    L = math.sqrt(prior_var) * torch.eye(n, dtype=X.dtype)
    return LGM(y, site, torch.zeros(n, dtype=X.dtype), L, D=X, kind="glm")


def full_gp(X, y, site, lengthscale, outputscale, jitter=1e-8) -> LGM:
    K = rbf(X, X, lengthscale, outputscale)
    L = grown_cholesky(K, jitter * outputscale)
    return LGM(y, site, torch.zeros(X.shape[0], dtype=X.dtype), L, D=None, kind="gp")


def sparse_gp(X, Z, y, site, lengthscale, outputscale, jitter=1e-8) -> LGM:
    """Fixed inducing inputs Z: d_i = K_uu^-1 k_ui by Cholesky solves, c_i = K_ii - k_iu K_uu^-1 k_ui."""
    Kuu = rbf(Z, Z, lengthscale, outputscale)
    Luu = grown_cholesky(Kuu, jitter * outputscale)
    Kuf = rbf(Z, X, lengthscale, outputscale)
    D = torch.cholesky_solve(Kuf, Luu).T
    A = tri(Luu, Kuf, upper=False)
    c = (outputscale - (A * A).sum(0)).clamp_min(0.0)
    return LGM(y, site, torch.zeros(Z.shape[0], dtype=X.dtype), Luu, D=D, c=c, kind="sparse_gp")
