"""What a non-Gaussian likelihood provides: GPyTorch's `Likelihood` contract plus log-space fast paths
and what the predictive metrics need.

GPyTorch contract (checked by gpytorch.test.base_likelihood_test_case.BaseLikelihoodTestCase for every
registered likelihood, tests/unit/likelihoods/test_likelihood_contract.py):
* `forward(f)` -> the conditional p(y|f) as a torch Distribution (Bernoulli, Poisson, StudentT, ...), so
  `likelihood(f_samples)` works; each subclass implements it.
* `marginal(q_f)` -> the predictive p(y) = E_q(f)[p(y|f)] as a torch Distribution, so
  `likelihood(model(x))` works: a Bernoulli for binary likelihoods (closed form or quadrature for its
  probability), else `LatentGaussianPredictive` (likelihoods/predictive.py: log_prob by the log-space path
  below, mean / variance in closed form or by quadrature, exact sampling).
* `expected_log_prob(y, q_f)` (ELBO) and `log_marginal(y, q_f)` (log-loss DLM): a closed form where the
  class has one (`exact_expected_log_prob` / `exact_log_marginal`, flagged by `has_exact_expected_log_prob` /
  `has_exact_log_marginal`), else the adaptive composite rule of likelihoods/quadrature/ (the one
  integrator: Gauss-Legendre panels adapted to q, to the likelihood's `features(y)` and, for log E_q[p], to
  the tilted density's mode) of `log_prob_f(y, f)` = log p(y|f) (elementwise, numerically stable,
  broadcasting; the estimators use it directly, it must equal `forward(f).log_prob(y)`).
  `log_prob_f_derivs(y, f)` gives d/df and d2/df2 of log p (the tilted mode's Newton steps; autograd if a
  likelihood does not override it). Every such quantity is accurate to ~1e-9 nats against a dense float64
  grid for var / width^2 from 1e-4 to 1e4 (tests/unit/likelihoods/test_likelihood_accuracy.py, generated from the registry).
* `expected_log_prob_and_derivatives(y, mu, var)` -> (E_q[log p], d/dmu, d/dvar) without autograd: what the
  LGM sites (gpmath/sites.py) are built from.

Predictive metrics (dlm_bench/models/predictive_metrics.py): `metrics` names the metrics this likelihood's
task reports, `raw_units` says whether the targets are normalised (then nll / mse get `_raw` twins),
`predictive_log_marginal(y, mu, var)` is log p(y) for the NLL and `point_prediction(mu, var)` the point
prediction y_hat, the `point_estimate` property of the predictive distribution (the mean; binary: the mode,
the more likely class).

For the uPS sampler (estimators/ups.py) each likelihood also gives `log_max(y)` = log sup_f p(y|f) and
`mode(y)` = argmax_f p(y|f) (+-inf where the supremum is approached at infinity); p(y|f) must be
non-decreasing left of the mode and non-increasing right of it (true for all likelihoods here), so the
maximum of p(y|.) over an interval [a, b] is at an endpoint unless the mode lies in [a, b].
"""

from __future__ import annotations

import abc
import math

import gpytorch
import torch

from . import quadrature as quad
from .predictive import LatentGaussianPredictive


class ScalarLikelihood(gpytorch.likelihoods.Likelihood, abc.ABC):
    name = "?"
    has_exact_log_marginal = False
    has_exact_expected_log_prob = False
    metrics: tuple[str, ...] = ("nll",)  # metric names (models/predictive_metrics.py), in run.json order
    raw_units = False  # targets normalised: nll and mse also reported in original units (`_raw`)
    point_estimate = "mean"  # which property of marginal(q_f) point_prediction(mu, var) is: mean | mode
    tilted_centre = True  # log E_q[p]: panels around the tilted mode (likelihoods/quadrature/ log_marginal)
    # log p(y|f) concave in f: log E_q[p] tries Laplace-centred Gauss-Hermite first (quadrature.log_marginal)
    log_concave = False
    # E_q[log p] by Gauss-Hermite where var / width^2 is small: ((nodes, max ratio), ...) (quadrature.expected_log_prob)
    hermite_tiers: tuple[tuple[int, float], ...] = ()

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

    @abc.abstractmethod
    def forward(self, function_samples: torch.Tensor, *args, **kwargs) -> torch.distributions.Distribution:
        """p(y|f) as a torch Distribution with batch shape f.shape."""

    def log_prob_f_derivs(self, y: torch.Tensor, f: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(d/df, d2/df2) of log p(y|f); autograd unless a likelihood gives them in closed form."""
        return quad.autograd_derivs(self.log_prob_f)(y, f)

    def features(self, y: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """(centre, width) pairs in f where log p(y|f) changes on a scale much shorter than its distance from
        them (a peak, a kink, a transition): the quadrature puts geometric panels around each."""
        return []

    # -- GPyTorch API -------------------------------------------------------------------------

    def expected_log_prob(self, observations, function_dist, *args, **kwargs):
        mu, var = function_dist.mean, function_dist.variance
        if self.has_exact_expected_log_prob:
            return self.exact_expected_log_prob(observations, mu, var)
        return self.quadrature_expected_log_prob(observations, mu, var)

    def log_marginal(self, observations, function_dist, *args, **kwargs):
        return self.predictive_log_marginal(observations, function_dist.mean, function_dist.variance)

    # -- numerical versions (always available) ------------------------------------------------------
    def quadrature_log_marginal(self, y, mu, var):
        return quad.log_marginal(self.log_prob_f, y, mu, var, self.features(y), self.log_prob_f_derivs,
                                 self.tilted_centre, self.log_concave)

    def quadrature_expected_log_prob(self, y, mu, var):
        return quad.expected_log_prob(self.log_prob_f, y, mu, var, self.features(y), self.log_prob_f_derivs,
                                      self.expected_log_prob_peak(mu, var), self.hermite_tiers)

    def expected_log_prob_peak(self, mu, var):
        """(c, s^2) where N(f|mu,var) |log p(y|f)| peaks, if log p grows so fast that this is far from mu."""
        return None

    def expected_log_prob_and_derivatives(self, y, mu, var):
        """(E_q[log p(y|f)], d/dmu, d/dvar) per point, no autograd: closed form where the class has one
        (`exact_expected_log_prob_and_derivatives`), else the quadrature rule applied to the derivatives."""
        exact = getattr(self, "exact_expected_log_prob_and_derivatives", None)
        if exact is not None:
            return exact(y, mu, var)
        return quad.expected_log_prob_and_derivatives(self.log_prob_f, y, mu, var, self.features(y),
                                                      self.log_prob_f_derivs)

    def moment_features(self) -> list[tuple[float, float]]:
        """(centre, width) pairs of E[y|f] and Var[y|f] as functions of f (for the predictive moments)."""
        return []

    def predictive_log_marginal(self, y, mu, var):
        """log E_q[p(y|f)] for metrics: the closed form where there is one, else quadrature."""
        if self.has_exact_log_marginal:
            return self.exact_log_marginal(y, mu, var)
        return self.quadrature_log_marginal(y, mu, var)

    def marginal(self, function_dist, *args, **kwargs) -> torch.distributions.Distribution:
        """The predictive distribution p(y) = E_q(f)[p(y|f)] (marginals of q(f), independent per point)."""
        return LatentGaussianPredictive(self, function_dist.mean, function_dist.variance)

    # -- predictive moments and point prediction (defaults by quadrature of forward(f)) ---------------
    def predictive_mean(self, mu, var):
        """E[y] = E_q[E[y|f]]."""
        return quad.expectation(lambda f: self.forward(f).mean, mu, var, self._moment_features(mu))

    def predictive_variance(self, mu, var):
        """Var[y] = E_q[Var[y|f]] + Var_q[E[y|f]]."""
        m = self.predictive_mean(mu, var)
        second = quad.expectation(lambda f: self.forward(f).variance + self.forward(f).mean ** 2, mu, var,
                                  self._moment_features(mu))
        return (second - m**2).clamp_min(0)

    def _moment_features(self, like):
        return [(torch.full_like(like, c), torch.full_like(like, w)) for c, w in self.moment_features()]

    def point_prediction(self, mu, var):
        """The point prediction y_hat scored by mse / mre: the predictive mean."""
        return self.predictive_mean(mu, var)


# (nodes, max var) of Gauss-Hermite for E_q[log p] of probit and logistic: the largest var in {0.5, 1, 1.5, 2, 3, 4, 6, 8}
# at which n nodes stay within 1e-8 of a dense grid (values, d/dmu, d/dvar; mu in [-40, 40]) for both likelihoods
# (tests/unit/likelihoods/test_likelihood_accuracy.py checks 1e-6). Up to var = 6 because log p is analytic in a
# strip |Im f| < ~2.8 (the nearest complex zeros of Phi; pi for the logistic), so n nodes converge geometrically.
SMOOTH_BINARY_HERMITE_TIERS = ((16, 0.5), (24, 1.5), (32, 2.0), (48, 4.0), (64, 6.0))


class BinaryLikelihood(ScalarLikelihood):
    """y in {0, 1}: p(y=1|f) = sigmoid(logits(f)). The predictive is Bernoulli(p1), p1 = E_q[p(y=1|f)]
    (closed form or quadrature, in log space), and the point prediction its mode (the more likely class)."""

    metrics = ("nll", "error")
    point_estimate = "mode"

    @abc.abstractmethod
    def logits(self, f: torch.Tensor) -> torch.Tensor:
        """log p(y=1|f) - log p(y=0|f)."""

    def forward(self, function_samples, *args, **kwargs):
        return torch.distributions.Bernoulli(logits=self.logits(function_samples))

    def marginal(self, function_dist, *args, **kwargs):
        mu, var = function_dist.mean, function_dist.variance
        log_p1 = self.predictive_log_marginal(torch.ones_like(mu), mu, var)
        log_p0 = self.predictive_log_marginal(torch.zeros_like(mu), mu, var)
        return torch.distributions.Bernoulli(logits=log_p1 - log_p0)

    def predictive_mean(self, mu, var):
        return self.predictive_log_marginal(torch.ones_like(mu), mu, var).exp()

    def predictive_variance(self, mu, var):
        p1 = self.predictive_mean(mu, var)
        return p1 * (1 - p1)

    def point_prediction(self, mu, var):
        """1 where p(y=1) > 1/2, else 0 (compared in log space; a tie within round-off, 1e-12, is class 0)."""
        log_p1 = self.predictive_log_marginal(torch.ones_like(mu), mu, var)
        return (log_p1 > math.log(0.5) + 1e-12).to(mu.dtype)
