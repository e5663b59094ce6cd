"""Square-loss DLM bundle: kernel + Z, with m at its closed-form optimum (objectives/sq_dlm.py) for the
current hyperparameters. Joint: the profiled J*(theta, Z) / N is minimised over the kernel
hyperparameters and Z; fixed: everything is taken from a trained SVGP and nothing is left to train.
The paper defines no predictive variance for it, so `predict_f` returns only the mean (var = None).

The training loss needs only P = A A^T and A y of A = L^-1 K_uf (objectives/sq_dlm.py), the statistics the collapsed
SGPR bound needs too: with an RBF kernel on the CPU they come from models/fused_rbf.CollapsedRBFStats (kernel, solve
and backward fused), equal to the plain path to rounding (tests/unit/models/test_fused_rbf.py). Measured with one
thread on the 2-core AMD EPYC (M = 100, D = 26, float64, loss and gradients): 1.35x faster at N = 100-300, 1.4x at
N = 1000, 2.6x at N = 3000 (56 -> 22 ms a step; docs/performance.md)."""

from __future__ import annotations

import torch

from ..objectives.sq_dlm import sq_dlm_from_stats, sq_dlm_solve
from . import collapsed, fused_rbf
from .base import ModelBundle
from .components import initial_kernel_and_inducing


class SqDLMBundle(ModelBundle):
    likelihood_name = None  # square loss, no likelihood
    fast = True  # training loss through fused_rbf where the kernel allows it (False: the plain path, for tests)

    def __init__(self, kernel, Z: torch.Tensor, X_train, y_train, beta: float, learn_inducing=True):
        super().__init__()
        self.kernel, self.beta = kernel, float(beta)
        self.Z = torch.nn.Parameter(Z.clone(), requires_grad=learn_inducing)
        self.register_buffer("X_train", X_train, persistent=False)
        self.register_buffer("y_train", y_train, persistent=False)
        self.num_inducing = int(Z.shape[0])

    def solve(self, X, y):
        Kuu = self.kernel(self.Z).to_dense()
        return sq_dlm_solve(Kuu, self.kernel(self.Z, X).to_dense(), y, self.beta, collapsed.default_jitter(Kuu))

    def loss(self, X, y):
        if self.fast and fused_rbf.supports_fused_rbf(self.kernel, self.Z, X):
            return self.fused_loss(X, y) / X.shape[0]
        return self.solve(X, y).loss / X.shape[0]

    def fused_loss(self, X, y):
        """J(m*) from the fused statistics P and A y (collapsed.fused_rbf_stats); Kuu and its Cholesky as `solve`."""
        _, eye, P, Ay = collapsed.fused_rbf_stats(self.kernel, self.Z, X, y)
        return sq_dlm_from_stats(P, Ay, y.square().sum(), self.beta, eye)[2]

    @torch.no_grad()
    def predict_f(self, X):
        sol = self.solve(self.X_train, self.y_train)
        a = torch.linalg.solve_triangular(sol.L, self.kernel(self.Z, X).to_dense(), upper=False)
        return a.T @ sol.v, None  # K_*u Kuu^{-1} m* = (L^{-1} Ku*)^T v*

    def adopt_hyperparameters(self, pretrained) -> None:
        """Fixed sq-DLM: the stage-1 model's kernel and Z (SVGP, or the collapsed SGPR in regression), frozen
        (m stays in closed form)."""
        if hasattr(pretrained, "model"):  # SVGP
            kernel, Z = pretrained.model.covar_module, pretrained.model.variational_strategy.inducing_points
        else:  # collapsed (models/sgpr.py)
            kernel, Z = pretrained.kernel, pretrained.Z
        self.kernel.load_state_dict(kernel.state_dict())
        with torch.no_grad():
            self.Z.copy_(Z)
        for p in self.parameters():
            p.requires_grad_(False)


def build_sq_dlm(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> SqDLMBundle:
    model_cfg = cfg.model
    kernel, Z = initial_kernel_and_inducing(cfg, X_train)
    return SqDLMBundle(kernel, Z, X_train, y_train, cfg.objective.beta, model_cfg.learn_inducing)
