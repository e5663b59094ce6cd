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
gradient terms in another order): tests/unit/test_svgp_fast_path.py checks loss and gradients to 1e-10 relative.

Why bypass `VariationalStrategy.forward`: it has no way to block over the inputs (it concatenates Z and X into
one kernel call), and blocking is what removes the memory traffic; everything it computes is computed here by
the same functions in the same order.
"""

from __future__ import annotations

import gpytorch
import torch
from gpytorch.variational.variational_strategy import ComputePredictiveUpdates
from linear_operator.operators import DiagLinearOperator, SumLinearOperator

# Inputs per block: M x BLOCK float64 arrays (M = 100: 1.6 MB) mostly stay in a 1-2 MB L2 cache; measured on the
# 2-core machine (N = 10000, M = 100 and N = 20000, M = 50; M = 400 too) 2048 beat 256-1024 and 3072-4096.
BLOCK = 2048
# Below this many inputs the blocking gains nothing (one block); GPyTorch's own call is used.
MIN_INPUTS = 2 * BLOCK


def supports_blocked(model) -> bool:
    """A whitened VariationalStrategy (exactly that class) with a Cholesky q(u) on a model with no batch shape."""
    strategy = model.variational_strategy
    return (type(strategy) is gpytorch.variational.VariationalStrategy
            and isinstance(strategy._variational_distribution, gpytorch.variational.CholeskyVariationalDistribution)
            and strategy.inducing_points.dim() == 2
            and bool(strategy.updated_strategy.item()))


def blocked_whitened_predictive(model, X: torch.Tensor, block: int = BLOCK):
    """GPyTorch's training-mode q(f) at X (model(X) for a whitened SVGP in train mode with N > M), computed over
    blocks of `block` rows of X; see the module docstring."""
    strategy = model.variational_strategy
    # as _VariationalStrategy.__call__ in training mode: fresh caches, q(u) initialised on the first call
    strategy._clear_cache()
    if not strategy.variational_params_initialized.item():
        strategy._variational_distribution.initialize_variational_distribution(strategy.prior_distribution)
        strategy.variational_params_initialized.fill_(1)
    Z = strategy.inducing_points
    q_u = strategy.variational_distribution
    jitter = strategy.jitter_val
    # as VariationalStrategy.forward: chol(K_ZZ + jitter) (cached for the KL term), middle = S - I
    Kzz = model.covar_module(Z).add_jitter(jitter)
    L = strategy._cholesky_factor(Kzz)
    chol = L.to_dense().type(X.dtype)
    middle = SumLinearOperator(q_u.lazy_covariance_matrix,
                              strategy.prior_distribution.lazy_covariance_matrix.mul(-1)).to_dense()
    m = q_u.mean
    means, variances = [], []
    for Xb in X.split(block, dim=-2):
        Kzx = model.covar_module(Z, Xb).to_dense()
        mean_update, var_update = ComputePredictiveUpdates.apply(chol, Kzx, middle, m)
        means.append(model.mean_module(Xb) + mean_update)
        variances.append(model.covar_module(Xb, diag=True) + jitter + var_update)
    return gpytorch.distributions.MultivariateNormal(torch.cat(means), DiagLinearOperator(torch.cat(variances)))
