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
    Ay = A @ y
    LB = torch.linalg.cholesky(eye + (A @ A.T) / beta)
    w = torch.linalg.solve_triangular(LB, Ay.unsqueeze(-1), upper=False)
    v = torch.linalg.solve_triangular(LB.T, w, upper=True).squeeze(-1) / beta
    loss = 0.5 * (y.square().sum() - w.square().sum() / beta)
    return SqDLMSolution(L, v, loss)

