"""The whitened SVGP's training-mode q(f), computed over blocks of the inputs (the joint-hyperparameter fast path).

GPyTorch's whitened `VariationalStrategy` evaluates, every training iteration, K_ZX on all N inputs (an M x N matrix),
then A = L^-1 K_ZX, mean = mu_X + A^T m and var = diag K_XX + jitter + colsum(A * (S - I) A) through its fused
`ComputePredictiveUpdates` (forward and backward). Each elementwise step of the kernel (scaling, squared distances,
clamp, exp, outputscale) and of its backward then streams an M x N array through memory: at N = 10000, M = 100 an
8 MB array per pass, about twenty passes per step, out of cache. `blocked_whitened_predictive` runs the *same*
GPyTorch calls (the model's `covar_module` and `mean_module`, psd_safe_cholesky of K_ZZ + jitter, the
`ComputePredictiveUpdates` autograd function, q(u) from the variational distribution) on blocks of `block` inputs,
so every M x block array stays in the L2 cache, forward and backward (autograd runs the blocks' backward one
after the other, in reverse order). It returns the same MultivariateNormal(mean, diag var) that GPyTorch's
training-mode call returns, so the MLL (VariationalELBO / PredictiveLogLikelihood / the estimators) and the
likelihood are GPyTorch's, unchanged. The results equal GPyTorch's to rounding (the blocks sum the M x M
gradient terms in another order): tests/unit/models/test_svgp_fast_path.py checks loss and gradients to 1e-10 relative.

With a ScaleKernel(RBFKernel) (no batch shape) the blocks go through models/fused_rbf.WhitenedRBFPredictive instead:
the same q(f) with the kernel, the solve A = L^-1 K_ZX and the backward written out by hand (issue 57: on an AMD CPU
MKL's triangular solve and the kernel's elementwise passes dominated this path);
tests/unit/models/test_fused_rbf.py checks it against GPyTorch's call. Other kernels and the batched beta grid keep the GPyTorch calls below.

Why bypass `VariationalStrategy.forward`: it has no way to block over the inputs (it concatenates Z and X into
one kernel call), and blocking is what removes the memory traffic; everything it computes is computed here by
the same functions in the same order.
"""

from __future__ import annotations

import gpytorch
import torch
from gpytorch.variational.variational_strategy import ComputePredictiveUpdates
from linear_operator.operators import DiagLinearOperator, SumLinearOperator

from ..training import gpytorch_internals
from . import fused_rbf

# Inputs per block: M x BLOCK float64 arrays (M = 100: 1.6 MB) mostly stay in a 1-2 MB L2 cache; measured on the
# 2-core machine (N = 10000, M = 100 and N = 20000, M = 50; M = 400 too) 2048 beat 256-1024 and 3072-4096.
BLOCK = 2048
# A batched model (the beta grid, models/batched_svgp.py) streams B x M x block arrays: blocks of about this many
# elements. Measured by `scripts/bench_batched_joint.py --grid` (N = 3000, M = 100, D = 26, one thread, 2-core
# machine, step time relative to GPyTorch's call): B = 19: blocks of 256-1024 0.66-0.70, 2048 0.82; B = 5: blocks of
# 512-2048 0.68-0.75. At N = 13829, B = 19: 0.44-0.47 (blocks of 345-690); at N = 1000: 0.85; at N = 300: none.
BATCH_BLOCK_ELEMENTS = 655360
MIN_BATCH_BLOCK = 256


def block_size(model) -> int:
    """Inputs per block: BLOCK for one model; for a batched one about BATCH_BLOCK_ELEMENTS / (B M), at least
    MIN_BATCH_BLOCK and at most BLOCK."""
    Z = model.variational_strategy.inducing_points
    if Z.dim() == 2:
        return BLOCK
    members, m = Z.shape[0], Z.shape[-2]
    return max(MIN_BATCH_BLOCK, min(BLOCK, BATCH_BLOCK_ELEMENTS // (members * m)))


def supports_blocked(model) -> bool:
    """A whitened VariationalStrategy (exactly that class) with a Cholesky q(u) on a model with no batch shape or
    one batch dimension (the batched beta grid)."""
    strategy = model.variational_strategy
    return (type(strategy) is gpytorch.variational.VariationalStrategy
            and isinstance(gpytorch_internals.q_u_module(strategy), gpytorch.variational.CholeskyVariationalDistribution)
            and strategy.inducing_points.dim() in (2, 3)
            and bool(strategy.updated_strategy.item()))


def worth_blocking(model, X: torch.Tensor) -> bool:
    """The blocked call for this training-mode evaluation: on the CPU (a cache optimisation), full-batch or large
    minibatch X [N, D] of at least two blocks (below that the blocking gains nothing: GPyTorch's own call) and
    more inputs than Z, and a model supports_blocked."""
    return (X.device.type == "cpu" and X.dim() == 2 and X.shape[-2] >= 2 * block_size(model)
            and X.shape[-2] > model.variational_strategy.inducing_points.shape[-2] and supports_blocked(model))


def blocked_whitened_predictive(model, X: torch.Tensor, block: int | None = None):
    """GPyTorch's training-mode q(f) at X (model(X) for a whitened SVGP in train mode with N > M), computed over
    blocks of `block` rows of X (default block_size(model)); see the module docstring. X is [N, D]; a batched
    model's q(f) has mean and variance [B, N]."""
    block = block or block_size(model)
    strategy = model.variational_strategy
    # as _VariationalStrategy.__call__ in training mode: fresh caches, q(u) initialised on the first call
    gpytorch_internals.clear_cache(strategy)
    gpytorch_internals.initialise_q_u(strategy)
    Z = strategy.inducing_points
    q_u = strategy.variational_distribution
    jitter = strategy.jitter_val
    # as VariationalStrategy.forward: chol(K_ZZ + jitter) (cached for the KL term), middle = S - I
    Kzz = model.covar_module(Z).add_jitter(jitter)
    L = gpytorch_internals.cholesky_factor(strategy, Kzz)
    chol = L.to_dense().type(X.dtype)
    middle = SumLinearOperator(q_u.lazy_covariance_matrix,
                              strategy.prior_distribution.lazy_covariance_matrix.mul(-1)).to_dense()
    m = q_u.mean
    if fused_rbf.supports_fused_rbf(model.covar_module, Z, X):
        # RBF kernel: the same q(f) with the kernel, the solve and the backward fused (models/fused_rbf.py)
        kernel = model.covar_module
        mean_update, var_update = fused_rbf.WhitenedRBFPredictive.apply(
            X, Z, kernel.base_kernel.lengthscale, kernel.outputscale, chol, middle, m, block)
        return gpytorch.distributions.MultivariateNormal(
            model.mean_module(X) + mean_update,
            DiagLinearOperator(kernel(X, diag=True) + jitter + var_update))
    means, variances = [], []
    for Xb in X.split(block, dim=-2):
        Kzx = model.covar_module(Z, Xb).to_dense()
        mean_update, var_update = ComputePredictiveUpdates.apply(chol, Kzx, middle, m)
        means.append(model.mean_module(Xb) + mean_update)
        variances.append(model.covar_module(Xb, diag=True) + jitter + var_update)
    return gpytorch.distributions.MultivariateNormal(torch.cat(means, dim=-1),
                                                     DiagLinearOperator(torch.cat(variances, dim=-1)))
