"""The GPyTorch private attributes the SVGP family relies on, in one place.

Checked against GPyTorch 1.15.2 (linear_operator 0.6.1). Every other module of the package, the scripts and the tests
reach these through the functions below; tests/unit/training/test_gpytorch_internals.py checks each against the public
behaviour it stands for, so a GPyTorch upgrade that moves one of them breaks that test, not a run.

Why each is needed:
- `_VariationalStrategy._variational_distribution`: the Module holding q(u)'s parameters. The public
  `variational_distribution` is the memoised *distribution* it returns; the fast paths (models/fast_svgp.py,
  models/batched_unwhitened.py) need the Module: its class (Cholesky q(u) or not), its raw Cholesky factor, and
  `initialize_variational_distribution`. Its attribute name is also the prefix of q(u)'s state_dict keys.
- `_VariationalStrategy._clear_cache()`: the training-mode `__call__` drops the memoised p(u), q(u) and chol K_ZZ
  before each evaluation; the fast paths replace that call, so they must drop them too.
- `VariationalStrategy._cholesky_factor(K_ZZ)`: chol(K_ZZ + jitter) as the whitened strategy computes and memoises it
  (in `gpytorch.settings._linalg_dtype_cholesky`'s dtype): the blocked q(f) uses the same factor.
- `gpytorch.settings._linalg_dtype_cholesky`: that dtype, for the frozen-hyperparameter path's own factor.
- `gpytorch.mlls._approximate_mll._ApproximateMarginalLogLikelihood`: the base class of VariationalELBO and
  PredictiveLogLikelihood (not exported by gpytorch.mlls). The sampled and quadrature estimators subclass it, so
  their likelihood term is combined with the KL, added losses and priors exactly as GPyTorch's own objectives do.

It lives in training/, the family's lowest package (it imports no other family package), so models/ and estimators/
both import it without an import circle between packages.
"""

from __future__ import annotations

import torch
from gpytorch.mlls._approximate_mll import _ApproximateMarginalLogLikelihood
from gpytorch.settings import _linalg_dtype_cholesky

# the base of GPyTorch's approximate MLLs: forward(q_f, y) = (_log_likelihood_term - beta KL + added losses +
# log priors) / num_data, where a subclass supplies _log_likelihood_term(q_f, y)
ApproximateMLL = _ApproximateMarginalLogLikelihood

_Q_U_ATTRIBUTE = "_variational_distribution"
_INITIALISED_BUFFER = "variational_params_initialized"


def q_u_module(strategy):
    """The Module holding q(u)'s parameters (calling it gives the public `strategy.variational_distribution`)."""
    return getattr(strategy, _Q_U_ATTRIBUTE)


def clear_cache(strategy) -> None:
    """Drop the strategy's memoised p(u), q(u) and chol K_ZZ, as its training-mode `__call__` does first."""
    strategy._clear_cache()


def initialise_q_u(strategy) -> None:
    """q(u) set to the prior p(u) if it is not yet initialised, as the first training-mode `__call__` does."""
    if not strategy.variational_params_initialized.item():
        q_u_module(strategy).initialize_variational_distribution(strategy.prior_distribution)
        strategy.variational_params_initialized.fill_(1)


def cholesky_factor(strategy, Kzz):
    """The whitened strategy's chol(Kzz) (a TriangularLinearOperator), memoised on the strategy until the next
    `clear_cache`."""
    return strategy._cholesky_factor(Kzz)


def cholesky_dtype() -> torch.dtype:
    """The dtype GPyTorch computes Cholesky factors in (`gpytorch.settings.linalg_dtypes(cholesky=...)`)."""
    return _linalg_dtype_cholesky.value()


def is_q_u_entry(name: str) -> bool:
    """Whether a named parameter or state_dict key belongs to q(u) (its parameters or the initialised flag); everything
    else is a hyperparameter or Z."""
    return _Q_U_ATTRIBUTE in name or _INITIALISED_BUFFER in name
