"""PAC-GP and PAC-SGP (Reeb et al. 2018, sec. 3): GPs trained by minimising the PAC-Bayes bound B of
eq. (5) (objective=pac_kl, "kl-PAC-GP") or its Pinsker relaxation B_Pin (objective=pac_sqrt, "sqrt-PAC-GP").

- `pac_gp` (full): Q is the GP posterior of eq. (6) for a noise sigma_n^2 that is a free parameter of Q
  (not of the prior); KL from eq. (8); trains theta (kernel) and sigma_n. O(N^3) per step.
- `pac_sgp` (sparse): Q(f) = int P(f | f_M) Q(f_M) with Q(f_M) = N(a_M, B_MM) (eq. 9), KL from eq. (10).
  pac.sparse_q=fitc (the paper's choice): a_M, B_MM from eq. (11) with alpha = 1, trains theta, Z,
  sigma_n; vfe: alpha = 0; free: a_M and B_MM = L L^T are free parameters (initialised at the FITC
  q(u) of the initial theta, Z and noise_init), trains theta, Z, a_M, L (no sigma_n: noise is None).

The Gibbs risk uses Q's noise-free marginals (the predictive variance of Q excludes sigma_n^2, see the
paper's Fig. 1 caption); the loss is the bound itself (a number in [0, 1] for pac_kl).
The penalty ln|Theta| = T ln(G+1) is constant during training; theta is rounded after training
(pac/evaluation.py), as in the paper.
"""

from __future__ import annotations

import torch

from ..config.schema import SparseQ
from ..pac.bound import BOUNDS, grid_points, log_theta_size
from ..pac.evaluation import num_prior_hypers
from ..pac.kl import full_gp_kl_and_marginals, kl_collapsed, kl_sparse
from ..pac.losses import gibbs_risk
from ..gpmath.cholesky import jittered_cholesky
from . import collapsed
from .base import ModelBundle
from .components import gaussian_likelihood, initial_inducing_points, initial_kernel
from .sgpr import CollapsedBundle


class _PacObjective:
    """The bound on the training set, given the KL and the Gibbs-risk marginals."""

    def __init__(self, pac_cfg, objective: str, num_hypers: int):
        self.eps, self.loss_name, self.delta = float(pac_cfg.epsilon), pac_cfg.loss.value, float(pac_cfg.delta)
        self.bound = BOUNDS[objective]
        self.log_theta = log_theta_size(num_hypers, pac_cfg.grid_L, grid_points(pac_cfg))

    def __call__(self, y, mean, var, kl):
        risk = gibbs_risk(self.loss_name, y, mean, var, self.eps).mean()
        return self.bound(risk, kl, y.shape[0], self.log_theta, self.delta)


class PacGPBundle(ModelBundle):
    """Full PAC-GP: kernel + sigma_n, Q from eq. (6)."""

    def __init__(self, kernel, likelihood, X_train, y_train, pac_cfg, objective: str):
        super().__init__()
        self.kernel, self.likelihood = kernel, likelihood
        self.register_buffer("X_train", X_train, persistent=False)
        self.register_buffer("y_train", y_train, persistent=False)
        self.objective = _PacObjective(pac_cfg, objective, num_prior_hypers(kernel))

    def _kl_and_marginals(self, X, y):
        """KL of eq. (8) and Q's noise-free marginals at X (the training inputs)."""
        return full_gp_kl_and_marginals(self.kernel(X).to_dense(), self.noise, y)

    def loss(self, X, y):
        kl, mean, var = self._kl_and_marginals(X, y)
        return self.objective(y, mean, var, kl)

    def pac_kl(self):
        return self._kl_and_marginals(self.X_train, self.y_train)[0]

    @torch.no_grad()
    def predict_f(self, X):
        Lc, _ = jittered_cholesky(self.kernel(self.X_train).to_dense(), self.noise)
        alpha = torch.cholesky_solve(self.y_train.unsqueeze(-1), Lc).squeeze(-1)
        Kxs = self.kernel(self.X_train, X).to_dense()
        V = torch.linalg.solve_triangular(Lc, Kxs, upper=False)
        return Kxs.T @ alpha, (self.kernel(X, diag=True) - V.square().sum(0)).clamp_min(0.0)


class PacSGPBundle(CollapsedBundle):
    """Sparse PAC-SGP: kernel + Z (+ sigma_n for fitc/vfe, + a_M, L for free). fitc / vfe: the collapsed q(u) of
    models/sgpr.py (its training loss over blocks of the points on the CPU: collapsed.blocked_terms_and_marginals;
    M = 500: 8 MB per M x block array), trained on the bound instead of F_alpha."""

    def __init__(self, kernel, Z, likelihood, X_train, y_train, pac_cfg, objective: str, learn_inducing=True):
        alpha = {SparseQ.fitc: 1.0, SparseQ.vfe: 0.0, SparseQ.free: 1.0}[pac_cfg.sparse_q]
        super().__init__(kernel, Z, likelihood, X_train, y_train, alpha, learn_inducing)
        self.sparse_q = pac_cfg.sparse_q
        self.register_buffer("Z_init", Z.clone(), persistent=False)  # for plots of the inducing inputs' movement
        self.objective = _PacObjective(pac_cfg, objective, num_prior_hypers(kernel))
        if self.sparse_q is SparseQ.free:
            with torch.no_grad():  # start at the FITC q(u) of the initial hyperparameters
                t = self.terms(X_train, y_train)
                a, R = collapsed.q_u(t)
                B = R @ R.T
                B = 0.5 * (B + B.T) + 1e-10 * B.diagonal().mean() * torch.eye(B.shape[0], dtype=B.dtype)
                Lb = torch.linalg.cholesky(B)
            self.q_mean = torch.nn.Parameter(a.clone())
            self.q_tril = torch.nn.Parameter(torch.tril(Lb, -1).clone())
            self.q_log_diag = torch.nn.Parameter(Lb.diagonal().log().clone())
            self.likelihood.noise_covar.raw_noise.requires_grad_(False)

    @property
    def noise(self):
        return None if self.sparse_q is SparseQ.free else self.noise_var()

    def _free(self, X):
        """(L, A = L^{-1} Kuf, kff, W = L^{-1} L_B, L_B) for the free-form Q(f_M)."""
        Kuu, Kuf, kff = self.kernels(X)
        L, _ = jittered_cholesky(Kuu, collapsed.default_jitter(Kuu))
        Lb = torch.tril(self.q_tril, -1) + torch.diag(self.q_log_diag.exp())
        A = torch.linalg.solve_triangular(L, Kuf, upper=False)
        W = torch.linalg.solve_triangular(L, Lb, upper=False)
        return L, A, kff, W, Lb

    def _free_marginals(self, L, A, kff, W):
        w = torch.linalg.solve_triangular(L, self.q_mean.unsqueeze(-1), upper=False).squeeze(-1)
        return A.T @ w, (kff - A.square().sum(0) + (W.T @ A).square().sum(0)).clamp_min(0.0)

    def loss(self, X, y):
        if self.sparse_q is SparseQ.free:
            L, A, kff, W, Lb = self._free(X)
            mean, var = self._free_marginals(L, A, kff, W)
            return self.objective(y, mean, var, kl_sparse(L, self.q_mean, Lb))
        if self.in_blocks(X):
            t, mean, var = self.blocked_terms(X, y, marginals=True)
        else:
            t = self.terms(X, y)
            mean, var = collapsed.predict_at_inputs(t)
        return self.objective(y, mean, var, kl_collapsed(t))

    def pac_kl(self):
        if self.sparse_q is SparseQ.free:
            L, _, _, _, Lb = self._free(self.X_train)
            return kl_sparse(L, self.q_mean, Lb)
        return super().pac_kl()

    @torch.no_grad()
    def predict_f(self, X):
        if self.sparse_q is SparseQ.free:
            L, A, kff, W, _ = self._free(X)
            return self._free_marginals(L, A, kff, W)
        return super().predict_f(X)


def _kernel_and_likelihood(cfg, X_train):
    m = cfg.model
    kernel = initial_kernel(cfg, X_train)
    likelihood = gaussian_likelihood(m)
    return kernel.to(X_train), likelihood.to(X_train)


def build_pac_gp(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> PacGPBundle:
    kernel, likelihood = _kernel_and_likelihood(cfg, X_train)
    return PacGPBundle(kernel, likelihood, X_train, y_train, cfg.pac, cfg.objective.name)


def build_pac_sgp(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> PacSGPBundle:
    kernel, likelihood = _kernel_and_likelihood(cfg, X_train)
    Z = initial_inducing_points(X_train, cfg.model.num_inducing, cfg.model.inducing_init, cfg.seed)
    return PacSGPBundle(kernel, Z, likelihood, X_train, y_train, cfg.pac, cfg.objective.name, cfg.model.learn_inducing)
