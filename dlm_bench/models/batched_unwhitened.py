"""The batched unwhitened SVGP's training-mode q(f) and KL(q(u) || p(u)), fused (the joint members of a batched
beta grid with `model.whiten=false`, models/batched_svgp.py).

Why bypass GPyTorch's `UnwhitenedVariationalStrategy.forward` here: at the sizes of the beta grids (n ~ 500,
M ~ 20, B ~ 16) a step is dominated by per-operation overhead, and half of the batched step went to that
forward's linear_operator layer (CholLinearOperator / TriangularLinearOperator / PsdSumLinearOperator objects,
broadcast_shapes and expand bookkeeping, a Cholesky solve with a left tensor, a second solve for the
inverse quadratic form) and to the KL's own round of linear_operator calls (root decomposition, a further
Cholesky solve and logdets). docs/performance.md ("Batched beta grid") has the profile. The same math with one
batched Cholesky of K_ZZ and ONE triangular solve, no linear_operator objects:

    L = chol(K_ZZ + jitter I),  [A | a | R] = L^-1 [K_ZX | m - mu_Z | L_S]      (L_S: q(u)'s Cholesky factor)
    mean = mu_X + a^T A                                  (= mu_X + K_XZ K_ZZ^-1 (m - mu_Z))
    var  = max(0, diag K_XX - colsum(A^2)) + colsum((R^T A)^2)
                                                         (= k_xx - diag(K_XZ K_ZZ^-1 K_ZX), clamped at 0 as
                                                            GPyTorch does, + diag(K_XZ K_ZZ^-1 S K_ZZ^-1 K_ZX))
    KL   = 1/2 (logdet K_ZZ - logdet S + ||R||_F^2 + ||a||^2 - M)
                                                         (tr(K_ZZ^-1 S) = ||L^-1 L_S||_F^2, the Mahalanobis term
                                                            (m - mu_Z)^T K_ZZ^-1 (m - mu_Z) = ||a||^2)

The kernel and mean are the model's GPyTorch modules (covar_module, mean_module), the Cholesky is
linear_operator's psd_safe_cholesky (so a non-PSD K_ZZ raises NotPSDError as before, and fit_batched's fallback
still applies), logdets are computed as linear_operator's CholLinearOperator computes them (log of the squared
Cholesky diagonal). The result is a gpytorch MultivariateNormal(mean, DiagLinearOperator(var)) -- the MLLs
(VariationalELBO, PredictiveLogLikelihood, the quadrature / bMC estimators) read only `.mean` and `.variance`
of q(f) -- and the KL is handed to the MLL through the strategy's kl_divergence() (FusedKLUnwhitenedStrategy),
so the MLL and likelihood code is GPyTorch's / dlm_bench's, unchanged. Loss and every gradient equal GPyTorch's
path to rounding: tests/unit/models/test_batched_fused.py (float64, 1e-10 relative; probit and Gaussian, DLM and ELBO).
"""

from __future__ import annotations

import gpytorch
import torch
from linear_operator.operators import DiagLinearOperator
from linear_operator.utils.cholesky import psd_safe_cholesky

from ..training import gpytorch_internals

class _PredictiveUpdates(torch.autograd.Function):
    """(A, W = [a | R], diag K_XX) -> (a^T A, max(0, diag K_XX - colsum(A^2)) + colsum((R^T A)^2)) with a
    hand-written backward: autograd's backward of the same expression makes about twice as many passes over the
    [B, M, N] arrays (square backward, broadcasting, separate small products), which dominate the batched step.
    P = W^T A holds both a^T A (row 0) and C = R^T A (the rest): one product forward, two backward. The clamp's
    gradient is torch.clamp's (passed where the clamped value is >= 0)."""

    @staticmethod
    def forward(ctx, A, W, kxx):
        P = W.mT @ A  # [B, 1 + M, N]
        C = P[..., 1:, :]
        d = kxx - (A * A).sum(-2)
        var = d.clamp(0, torch.inf) + (C * C).sum(-2)
        ctx.save_for_backward(A, W, P, d)
        return P[..., 0, :].clone(), var

    @staticmethod
    def backward(ctx, g_mean, g_var):
        A, W, P, d = ctx.saved_tensors
        need_A, need_W, need_kxx = ctx.needs_input_grad
        if g_var is None:
            g_var = torch.zeros_like(d)
        g_d = g_var * (d >= 0)
        g_P = P * (2 * g_var).unsqueeze(-2)  # d var / d C = 2 C
        g_P[..., 0, :] = 0 if g_mean is None else g_mean
        g_A = g_W = None
        if need_A:
            g_A = W @ g_P
            g_A.addcmul_(A, g_d.unsqueeze(-2), value=-2)
        if need_W:
            g_W = A @ g_P.mT
        return g_A, g_W, (g_d if need_kxx else None)


class FusedKLUnwhitenedStrategy(gpytorch.variational.UnwhitenedVariationalStrategy):
    """GPyTorch's UnwhitenedVariationalStrategy (same parameters, buffers and state-dict keys); its
    kl_divergence() returns the KL that fused_unwhitened_predictive computed for the same q(u) and prior in the
    same loss evaluation (taken once), else GPyTorch's."""

    _fused_kl = None

    def kl_divergence(self):
        kl, self._fused_kl = self._fused_kl, None
        return super().kl_divergence() if kl is None else kl


def _kernel(kernel, x1, x2, diag=False):
    """kernel(x1, x2).to_dense() (or kernel(x1, diag=True)): the kernel module's own forward, without Kernel.__call__'s
    LazyEvaluatedKernelTensor, whose batch-shape bookkeeping (torch.broadcast_shapes on every call, about 0.1 ms
    each) cost about 1 ms of a 9 ms batched step. Kernel.__call__ adds nothing else here: it selects active_dims
    (none: else __call__ is used) and unsqueezes 1-D inputs (ours are [B, n, D])."""
    if kernel.active_dims is not None:
        return kernel(x1, x2, diag=diag) if diag else kernel(x1, x2).to_dense()
    return kernel.forward(x1, x2, diag=diag)


def supports_fused(model) -> bool:
    strategy = model.variational_strategy
    return (isinstance(strategy, FusedKLUnwhitenedStrategy)
            and isinstance(gpytorch_internals.q_u_module(strategy), gpytorch.variational.CholeskyVariationalDistribution)
            and strategy.inducing_points.dim() == 3)


def fused_unwhitened_predictive(model, X: torch.Tensor):
    """model(X) in training mode for a batched (inducing points [B, M, D]) unwhitened SVGP with N != M inputs,
    q(u) initialised; also sets the strategy's KL for the MLL's next kl_divergence() call. See the module
    docstring."""
    strategy = model.variational_strategy
    gpytorch_internals.clear_cache(strategy)  # as the training-mode __call__: no memo of another step survives
    Z = strategy.inducing_points
    B, M = Z.shape[0], Z.shape[-2]
    q = gpytorch_internals.q_u_module(strategy)
    chol_S = q.chol_variational_covar.tril()  # CholeskyVariationalDistribution masks the upper triangle
    Xb = X.expand(B, *X.shape[-2:])
    mean_Z = model.mean_module(Z)
    Kzz = _kernel(model.covar_module, Z, Z)
    eye = torch.eye(M, dtype=Kzz.dtype, device=Kzz.device)
    L = psd_safe_cholesky(Kzz + strategy.jitter_val * eye)
    Kzx = _kernel(model.covar_module, Z, Xb)
    A = torch.linalg.solve_triangular(L, Kzx, upper=False)  # [B, M, N]
    small = torch.linalg.solve_triangular(L, torch.cat([(q.variational_mean - mean_Z).unsqueeze(-1), chol_S], -1),
                                          upper=False)  # [B, M, 1 + M]: the big solve's right side is not copied
    a, R = small[..., 0], small[..., 1:]
    mean_update, var = _PredictiveUpdates.apply(A, small, _kernel(model.covar_module, Xb, Xb, diag=True))
    mean = model.mean_module(Xb) + mean_update
    logdet_K = L.diagonal(dim1=-2, dim2=-1).pow(2).log().sum(-1)
    logdet_S = chol_S.diagonal(dim1=-2, dim2=-1).pow(2).log().sum(-1)
    strategy._fused_kl = 0.5 * (logdet_K - logdet_S + R.square().sum((-2, -1)) + a.square().sum(-1) - M)
    return gpytorch.distributions.MultivariateNormal(mean, DiagLinearOperator(var))
