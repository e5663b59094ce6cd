"""What a non-Gaussian likelihood provides beyond GPyTorch's `Likelihood` API.

GPyTorch's MLL classes call `expected_log_prob(y, q_f)` (ELBO), `log_marginal(y, q_f)` (log-loss DLM)
and `forward(f).log_prob(y)` (bMC). Subclasses implement `log_prob_f(y, f)` = log p(y|f) (elementwise,
numerically stable, broadcasting) and, where one exists, a closed form:
`exact_log_marginal(y, mu, var)` / `exact_expected_log_prob(y, mu, var)` (the class attributes
`has_exact_log_marginal` / `has_exact_expected_log_prob` say which). Otherwise both are computed by
log-space Gauss-Hermite quadrature (likelihoods/quadrature.py).

For the uPS sampler (estimators/ups.py) each likelihood also gives `log_max(y)` = log sup_f p(y|f) and
`mode(y)` = argmax_f p(y|f) (+-inf where the supremum is approached at infinity); p(y|f) must be
non-decreasing left of the mode and non-increasing right of it (true for all likelihoods here), so the
maximum of p(y|.) over an interval [a, b] is at an endpoint unless the mode lies in [a, b].
"""

from __future__ import annotations

import abc

import gpytorch
import torch

from .quadrature import gh_expected_log_prob, gh_log_marginal

NUM_NODES = 20


class ScalarLikelihood(gpytorch.likelihoods.Likelihood, abc.ABC):
    name = "?"
    has_exact_log_marginal = False
    has_exact_expected_log_prob = False
    log_prob_f_derivs = None  # optional (y, f) -> (d/df, d2/df2) of log p(y|f): the quadrature's Laplace centre

    def __init__(self):
        super().__init__()

    # -- to implement -------------------------------------------------------------------------
    @abc.abstractmethod
    def log_prob_f(self, y: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
        """Implemented by each likelihood."""

    @abc.abstractmethod
    def log_max(self, y: torch.Tensor) -> torch.Tensor:
        """Implemented by each likelihood."""

    @abc.abstractmethod
    def mode(self, y: torch.Tensor) -> torch.Tensor:
        """Implemented by each likelihood."""

    # -- GPyTorch API -------------------------------------------------------------------------
    def forward(self, function_samples, *args, **kwargs):
        return _LogProbDistribution(self, function_samples)

    def expected_log_prob(self, observations, function_dist, *args, **kwargs):
        mu, var = function_dist.mean, function_dist.variance
        if self.has_exact_expected_log_prob:
            return self.exact_expected_log_prob(observations, mu, var)
        return self.quadrature_expected_log_prob(observations, mu, var)

    def log_marginal(self, observations, function_dist, *args, **kwargs):
        mu, var = function_dist.mean, function_dist.variance
        if self.has_exact_log_marginal:
            return self.exact_log_marginal(observations, mu, var)
        return self.quadrature_log_marginal(observations, mu, var)

    # -- numerical versions (always available) ------------------------------------------------------
    def quadrature_log_marginal(self, y, mu, var, num_nodes: int = NUM_NODES):
        return gh_log_marginal(self.log_prob_f, y, mu, var, num_nodes, self.log_prob_f_derivs)

    def quadrature_expected_log_prob(self, y, mu, var, num_nodes: int = NUM_NODES):
        return gh_expected_log_prob(self.log_prob_f, y, mu, var, num_nodes)

    def predictive_log_marginal(self, y, mu, var):
        """log E_q[p(y|f)] for metrics: the closed form where there is one, else quadrature."""
        if self.has_exact_log_marginal:
            return self.exact_log_marginal(y, mu, var)
        return self.quadrature_log_marginal(y, mu, var)

    def marginal(self, function_dist, *args, **kwargs):
        raise TypeError(f"{type(self).__name__}: use predictive_log_marginal(y, mu, var) for predictions")


class _LogProbDistribution:
    """The minimal `forward(f)` result GPyTorch's sampling code and estimators/bmc.py use: `.log_prob(y)`."""

    def __init__(self, likelihood: ScalarLikelihood, f: torch.Tensor):
        self.likelihood, self.f = likelihood, f

    def log_prob(self, y: torch.Tensor) -> torch.Tensor:
        return self.likelihood.log_prob_f(y, self.f)
