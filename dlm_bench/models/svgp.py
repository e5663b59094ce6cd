"""SVGP (Hensman et al. 2015): GPyTorch ApproximateGP with a full-covariance (Cholesky) q(u)."""

from __future__ import annotations

import gpytorch
import torch
from linear_operator.operators import DiagLinearOperator, SumLinearOperator

from ..config.schema import MeanFunction
from ..estimators import effective_estimator, mll_class, mll_kwargs
from ..training import gpytorch_internals
from . import fast_svgp
from .base import ModelBundle, predict_f
from .components import build_likelihood, initial_kernel_and_inducing


def whitened_marginals(strategy, mean, A, prior_var):
    """q(f) at the inputs of a whitened strategy from cached prior terms (A = L^-1 K_uf, prior mean and variance):
    mean + A^T m, prior_var + diag(A^T (S - I) A), independent (only the marginals enter the losses)."""
    q = strategy.variational_distribution
    middle = SumLinearOperator(q.lazy_covariance_matrix, strategy.prior_distribution.lazy_covariance_matrix.mul(-1))
    middle = middle.to_dense()
    mean_update = (A.mT @ q.mean.unsqueeze(-1)).squeeze(-1)
    var_update = torch.sum(A.mT * (A.mT @ middle), dim=-1)
    return gpytorch.distributions.MultivariateNormal(mean + mean_update, DiagLinearOperator(prior_var + var_update))


class SVGP(gpytorch.models.ApproximateGP):
    def __init__(
        self,
        inducing_points: torch.Tensor,
        kernel: gpytorch.kernels.Kernel,
        mean: MeanFunction = MeanFunction.zero,
        learn_inducing: bool = True,
        whiten: bool = True,
    ):
        q_u = gpytorch.variational.CholeskyVariationalDistribution(inducing_points.size(0))
        strategy_cls = (
            gpytorch.variational.VariationalStrategy if whiten else gpytorch.variational.UnwhitenedVariationalStrategy
        )
        strategy = strategy_cls(self, inducing_points, q_u, learn_inducing_locations=learn_inducing)
        super().__init__(strategy)
        self.mean_module = (
            gpytorch.means.ConstantMean() if mean is MeanFunction.constant else gpytorch.means.ZeroMean()
        )
        self.covar_module = kernel

    def forward(self, x: torch.Tensor) -> gpytorch.distributions.MultivariateNormal:
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


class FrozenPredictive:
    """q(f) at training inputs with the kernel, mean and Z frozen (fixed-hyperparameter runs).

    GPyTorch's whitened VariationalStrategy recomputes, every iteration, K_ZZ, its Cholesky L and
    A = L^-1 K_ZX (O(M^3 + M^2 B)), then mean = mu_X + A^T m, var = diag K_XX + jitter + colsum(A * (S - I) A).
    With nothing but q(u) = N(m, S) trained, L is computed once per run and A once per input tensor: the
    full-batch X is the same tensor every iteration, so A is reused; a minibatch gets its own A (from the
    cached L). Same operations as GPyTorch's training-mode forward, so the same numbers
    (tests/unit/models/test_fixed_fast_path.py). The batched beta grid's members share the prior terms: called
    with their batched strategy, q(f) has their q(u) (models/batched_svgp.py)."""

    def __init__(self, model):
        self.model = model
        self._fingerprint, self._chol = None, None
        self._X, self._version, self._cached = None, None, None  # the input tensor A belongs to (kept alive)

    def _frozen_tensors(self):
        m = self.model
        return [*m.covar_module.parameters(), *m.mean_module.parameters(), m.variational_strategy.inducing_points]

    @torch.no_grad()
    def _prior_terms(self, X):
        from linear_operator.utils.cholesky import psd_safe_cholesky

        strategy = self.model.variational_strategy
        Z = strategy.inducing_points
        if self._chol is None:
            Kzz = self.model.covar_module(Z).add_jitter(strategy.jitter_val)
            self._chol = psd_safe_cholesky(Kzz.to_dense().type(gpytorch_internals.cholesky_dtype()))
        Kzx = self.model.covar_module(Z, X).to_dense()
        A = torch.linalg.solve_triangular(self._chol.type(Kzx.dtype), Kzx, upper=False)
        prior_var = self.model.covar_module(X, diag=True) + strategy.jitter_val
        return self.model.mean_module(X), A, prior_var

    def __call__(self, X, strategy=None):
        strategy = self.model.variational_strategy if strategy is None else strategy
        gpytorch_internals.clear_cache(strategy)  # q(u) is memoised per call, as in GPyTorch's training-mode __call__
        gpytorch_internals.initialise_q_u(strategy)  # as GPyTorch's first training-mode call
        # a kernel/mean/Z changed in place (load_state_dict) or moved (.to): start again
        fingerprint = tuple((t.data_ptr(), t._version, t.dtype, t.device) for t in self._frozen_tensors())
        if fingerprint != self._fingerprint:
            self._fingerprint, self._chol, self._X = fingerprint, None, None
        if X is not self._X or X._version != self._version:  # full batch: the same tensor every iteration
            self._X, self._version, self._cached = X, X._version, self._prior_terms(X)
        mean, A, prior_var = self._cached
        return whitened_marginals(strategy, mean, A, prior_var)


class SVGPBundle(ModelBundle):
    """SVGP + Gaussian likelihood + a GPyTorch approximate MLL (ELBO or log-loss DLM)."""

    fast_fixed = True  # fixed-hyperparameter runs: FrozenPredictive (False: GPyTorch's path every iteration)
    # joint runs on the CPU, whitened, full batch or large minibatches: q(f) over blocks of the inputs
    # (models/fast_svgp.py; a cache optimisation, so not on GPUs; False: GPyTorch's VariationalStrategy call)
    fast_joint = True

    def __init__(self, model: SVGP, likelihood, mll_cls, num_data: int, beta: float, likelihood_name="gaussian",
                 **mll_kwargs):
        super().__init__()
        self.likelihood_name = likelihood_name
        self.model, self.likelihood = model, likelihood
        self.mll = mll_cls(likelihood, model, num_data=num_data, beta=beta, **mll_kwargs)
        self.mll_kwargs = mll_kwargs  # the estimator's arguments (bMC: num_samples), reused by batched.py
        self.num_inducing = int(model.variational_strategy.inducing_points.shape[-2])
        self._frozen = None  # FrozenPredictive once the hyperparameters are adopted and frozen

    def loss(self, X, y):
        if (self._frozen is not None and self.fast_fixed and self.training and X.shape[-2] > self.num_inducing
                and self._frozen_still()):
            return -self.mll(self._frozen(X), y)
        if self.fast_joint and self.training and fast_svgp.worth_blocking(self.model, X):
            return -self.mll(fast_svgp.blocked_whitened_predictive(self.model, X), y)
        return -self.mll(self.model(X), y)

    def _frozen_still(self) -> bool:
        """Nothing but q(u) trainable, and a whitened VariationalStrategy with more data than Z (GPyTorch's
        diagonal training path, which FrozenPredictive reproduces)."""
        return not any(p.requires_grad for n, p in self.named_parameters() if not gpytorch_internals.is_q_u_entry(n))

    def predict_f(self, X):
        return predict_f(self.model, X)

    def adopt_hyperparameters(self, pretrained) -> None:
        """Fixed DLM: copy the kernel, mean, noise and Z of a trained SVGP (or of a collapsed SGPR, the
        regression stage 1), freeze them, and start q(u) afresh (GPyTorch re-initialises it to the prior on the
        next training-mode call)."""
        if isinstance(pretrained, SVGPBundle):
            fresh_q = {k: v for k, v in self.model.state_dict().items() if gpytorch_internals.is_q_u_entry(k)}
            state = {k: v for k, v in pretrained.model.state_dict().items() if not gpytorch_internals.is_q_u_entry(k)}
            self.model.load_state_dict({**state, **fresh_q})
        else:  # a collapsed bundle (models/sgpr.py): kernel, Z and noise; zero mean, nothing to copy for it
            self.model.covar_module.load_state_dict(pretrained.kernel.state_dict())
            with torch.no_grad():
                self.model.variational_strategy.inducing_points.copy_(pretrained.Z)
        self.model.variational_strategy.variational_params_initialized.fill_(0)
        self.likelihood.load_state_dict(pretrained.likelihood.state_dict())
        for name, p in self.named_parameters():
            p.requires_grad_(gpytorch_internals.is_q_u_entry(name))
        if type(self.model.variational_strategy) is gpytorch.variational.VariationalStrategy:
            self._frozen = FrozenPredictive(self.model)


def build_svgp(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> SVGPBundle:
    model_cfg = cfg.model
    kernel, Z = initial_kernel_and_inducing(cfg, X_train)
    model = SVGP(Z, kernel, model_cfg.mean, model_cfg.learn_inducing, model_cfg.whiten)
    likelihood = build_likelihood(model_cfg)
    estimator = effective_estimator(cfg.objective.name, cfg.estimator.name, model_cfg.get("likelihood"))
    mll_cls = mll_class(cfg.objective.name, estimator)
    return SVGPBundle(model, likelihood, mll_cls, X_train.shape[0], cfg.objective.beta,
                      likelihood_name=model_cfg.get("likelihood") or "gaussian",
                      **mll_kwargs(cfg.estimator, estimator))
