"""Square-loss DLM for sparse GP regression (Wei et al. 2021, sec. 2):

    J(m) = 1/2 sum_i (K_iu Kuu^{-1} m - y_i)^2 + beta/2 m^T Kuu^{-1} m.

Whitened, m = L v with L = chol(Kuu) and A = L^{-1} Kuf, J = 1/2 |A^T v - y|^2 + beta/2 |v|^2, a ridge
regression in v whose minimiser is v* = (A A^T + beta I)^{-1} A y = B^{-1} A y / beta with
B = I + A A^T / beta (eigenvalues >= 1, a safe Cholesky). The profiled objective is

    J* = J(m*) = 1/2 (|y|^2 - y^T A^T v*) = 1/2 (|y|^2 - |LB^{-1} A y|^2 / beta).

Pure functions of Kuu, Kuf and y, so that the closed form can be checked on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..gpmath.cholesky import jittered_cholesky


@dataclass
class SqDLMSolution:
    L: torch.Tensor  # chol(Kuu + jitter I)
    v: torch.Tensor  # whitened optimum, m* = L v*
    loss: torch.Tensor  # J(m*)

    @property
    def m(self) -> torch.Tensor:
        return self.L @ self.v


def sq_dlm_solve(Kuu, Kuf, y, beta: float, jitter=0.0) -> SqDLMSolution:
    L, eye = jittered_cholesky(Kuu, jitter)
    A = torch.linalg.solve_triangular(L, Kuf, upper=False)
    LB, w, loss = sq_dlm_from_stats(A @ A.T, A @ y, y.square().sum(), beta, eye)
    v = torch.linalg.solve_triangular(LB.T, w, upper=True).squeeze(-1) / beta
    return SqDLMSolution(L, v, loss)


def sq_dlm_from_stats(P, Ay, yy, beta: float, eye=None):
    """(chol B, LB^{-1} A y as a column, J*) from the data statistics P = A A^T, A y and |y|^2: all the profiled
    objective needs of the M x N matrix A, so the fused RBF path (models/fused_rbf.CollapsedRBFStats) can hand them
    over without forming A outside it."""
    eye = torch.eye(P.shape[-1], dtype=P.dtype, device=P.device) if eye is None else eye
    LB = torch.linalg.cholesky(eye + P / beta)
    w = torch.linalg.solve_triangular(LB, Ay.unsqueeze(-1), upper=False)
    return LB, w, 0.5 * (yy - w.square().sum() / beta)
