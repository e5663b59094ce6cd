"""Collapsed SGPR (Titsias 2009) and FITC (Snelson & Ghahramani 2006), one bundle with alpha = 0 and 1: only the
kernel hyperparameters, the noise and Z are trained; q(u) is the optimum for them, computed in closed form
(models/collapsed.py)."""

from __future__ import annotations

import torch

from . import collapsed, fused_rbf
from .base import ModelBundle
from .components import gaussian_likelihood, initial_kernel_and_inducing


class CollapsedBundle(ModelBundle):
    """Kernel + Z + Gaussian noise, trained on F_alpha / N (alpha=0: SGPR, alpha=1: FITC).
    Full batch only: the objective and the predictive need all the training data, kept as buffers."""

    # the CPU fast paths (False: the plain path, all at once): SGPR (alpha = 0) with an RBF kernel through
    # fused_rbf.CollapsedRBFStats (`fused_vfe`) at every N (1.8x faster a step at N = 1000, M = 100; 3.3x at N = 3000;
    # 2.4x at N = 3000, M = 500: docs/performance.md); everything else over blocks of the points from N = 2 BLOCK on
    # (collapsed.collapsed_terms_blocked)
    fast = True
    BLOCK = 2048  # points per block, as the SVGP path (models/fast_svgp.py); M = 200: 3.2 MB per M x block array

    def __init__(self, kernel, Z: torch.Tensor, likelihood, X_train, y_train, alpha: float, learn_inducing=True):
        super().__init__()
        self.kernel, self.likelihood, self.alpha = kernel, likelihood, float(alpha)
        self.Z = torch.nn.Parameter(Z.clone(), requires_grad=learn_inducing)
        self.register_buffer("X_train", X_train, persistent=False)
        self.register_buffer("y_train", y_train, persistent=False)
        self.num_inducing = int(Z.shape[0])

    def kernels(self, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(Kuu, Kuf, diag Kff) at the inputs X."""
        Kuu = self.kernel(self.Z).to_dense()
        return Kuu, self.kernel(self.Z, X).to_dense(), self.kernel(X, diag=True)

    def terms(self, X: torch.Tensor, y: torch.Tensor) -> collapsed.CollapsedTerms:
        Kuu, Kuf, kff = self.kernels(X)
        return collapsed.collapsed_terms(Kuu, Kuf, kff, self.noise_var(), y, self.alpha, collapsed.default_jitter(Kuu))

    def noise_var(self) -> torch.Tensor:
        """The likelihood's noise variance (also where `noise` is None: free-form PAC-SGP's initial q(u))."""
        return self.likelihood.noise.reshape(-1)[0]

    def in_blocks(self, X: torch.Tensor) -> bool:
        """Whether the training loss runs over blocks of the points: a cache optimisation, so on the CPU only."""
        return self.fast and X.device.type == "cpu" and X.shape[0] >= 2 * self.BLOCK

    def loss(self, X, y):
        if self.fast and self.alpha == 0.0 and fused_rbf.supports_fused_rbf(self.kernel, self.Z, X):
            return self.fused_vfe(X, y) / X.shape[0]
        if self.in_blocks(X):
            return collapsed.neg_log_marginal(self.blocked_terms(X, y)) / X.shape[0]
        return collapsed.neg_log_marginal(self.terms(X, y)) / X.shape[0]

    def fused_vfe(self, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """F_0 with an RBF kernel through models/fused_rbf.CollapsedRBFStats (kernel, solve and backward fused; the
        M x N matrix A never leaves it) and collapsed.vfe_from_stats. Kuu, its jitter and Cholesky are the same calls
        as `terms`; equal to `neg_log_marginal(self.terms(X, y))` to rounding (tests/unit/models/test_fused_rbf.py)."""
        _, _, P, v = collapsed.fused_rbf_stats(self.kernel, self.Z, X, y, self.BLOCK)
        kff_sum = self.kernel(X, diag=True).sum()
        return collapsed.vfe_from_stats(P, v, kff_sum, y.square().sum(), self.noise, X.shape[0])

    def blocked_terms(self, X: torch.Tensor, y: torch.Tensor, marginals: bool = False):
        """`terms` with the kernel evaluated block by block (collapsed.kernel_blocks); `marginals`: also q(f)'s
        marginals at X (collapsed.blocked_terms_and_marginals, for PAC-SGP's loss)."""
        Kuu = self.kernel(self.Z).to_dense()
        blocks = collapsed.kernel_blocks(self.kernel, self.Z, X, y, self.BLOCK)
        fn = collapsed.blocked_terms_and_marginals if marginals else collapsed.collapsed_terms_blocked
        return fn(Kuu, blocks, self.noise_var(), self.alpha, collapsed.default_jitter(Kuu))

    def pac_kl(self):
        """KL(q(u) || p(u)) of the implied q(u) (Reeb et al. 2018, eqs. 10-11), for paper=pac reports."""
        from ..pac.kl import kl_collapsed

        return kl_collapsed(self.terms(self.X_train, self.y_train))

    @torch.no_grad()
    def predict_f(self, X):
        t = self.terms(self.X_train, self.y_train)
        return collapsed.predict(t, self.kernel(self.Z, X).to_dense(), self.kernel(X, diag=True))


def build_collapsed(cfg, X_train: torch.Tensor, y_train: torch.Tensor, alpha: float) -> CollapsedBundle:
    model_cfg = cfg.model
    kernel, Z = initial_kernel_and_inducing(cfg, X_train)
    likelihood = gaussian_likelihood(model_cfg)
    return CollapsedBundle(kernel, Z, likelihood, X_train, y_train, alpha, model_cfg.learn_inducing)


def build_sgpr(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> CollapsedBundle:
    """Titsias (2009): the collapsed ELBO, alpha = 0."""
    return build_collapsed(cfg, X_train, y_train, alpha=0.0)


def build_fitc(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> CollapsedBundle:
    """Snelson & Ghahramani (2006): alpha = 1."""
    return build_collapsed(cfg, X_train, y_train, alpha=1.0)
