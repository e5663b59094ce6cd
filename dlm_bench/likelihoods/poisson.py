"""Poisson likelihoods for counts y in {0, 1, 2, ...}.

* `PoissonExpLikelihood`: rate exp(f). log p(y|f) = y f - exp(f) - lgamma(y+1); the ELBO term has the
  closed form E_N(f|mu,var)[log p] = y mu - exp(mu + var/2) - lgamma(y+1); log E_q[p(y|f)] has none
  (the adaptive rule of likelihoods/quadrature/, centred at the tilted mode). Predictive mean
  E[y] = E_q[exp f] = exp(mu + var/2).
* `PoissonSoftplusLikelihood`: rate softplus(f) (gentler tails); everything by the adaptive rule.

`forward(f)` is torch's Poisson(rate(f)); the predictive (`marginal`) has no closed form (its log_prob is
the adaptive quadrature above, its mean / variance closed form (exp) or Gauss-Hermite (softplus)).
The point prediction is the predictive mean.

For uPS: the maximum of p(y|f) over f is at rate = y (f = log y, or softplus^-1(y)); for y = 0 the
likelihood decreases in f and its supremum 1 is approached at f -> -inf.
"""

from __future__ import annotations

import abc
import math

import torch
import torch.nn.functional as F

from .base import ScalarLikelihood
from . import quadrature as quad


def _poisson_log_max(y):
    """log p(y | rate = y) = y log y - y - lgamma(y+1), with 0 log 0 = 0."""
    return torch.xlogy(y, y) - y - torch.lgamma(y + 1)


class _Poisson(ScalarLikelihood):
    metrics = ("nll", "mre")

    @staticmethod
    @abc.abstractmethod
    def rate(f: torch.Tensor) -> torch.Tensor:
        """The Poisson rate as a function of f."""

    def forward(self, function_samples, *args, **kwargs):
        return torch.distributions.Poisson(rate=self.rate(function_samples))


class PoissonExpLikelihood(_Poisson):
    name = "poisson_exp"
    log_concave = True  # y f - e^f - log y! is concave in f
    has_exact_expected_log_prob = True
    rate = staticmethod(torch.exp)

    def log_prob_f(self, y, f):
        return y * f - torch.exp(f) - torch.lgamma(y + 1)

    def log_prob_f_derivs(self, y, f):
        e = torch.exp(f)
        return y - e, -e

    def features(self, y):
        yy = y.clamp_min(1.0)
        return [(torch.log(yy), yy.rsqrt())]  # the peak at rate = y (width 1/sqrt(y) in f)

    def expected_log_prob_peak(self, mu, var):
        return (mu + var).detach(), var.detach()  # N(f|mu,var) e^f peaks at mu + var

    def exact_expected_log_prob(self, y, mu, var):
        return y * mu - torch.exp(mu + var / 2) - torch.lgamma(y + 1)

    def exact_expected_log_prob_and_derivatives(self, y, mu, var):
        rate = torch.exp(mu + var / 2)
        return y * mu - rate - torch.lgamma(y + 1), y - rate, -0.5 * rate

    def log_max(self, y):
        return _poisson_log_max(y)

    def mode(self, y):
        return torch.where(y > 0, torch.log(y), torch.full_like(y, -math.inf))

    def predictive_mean(self, mu, var):
        return torch.exp(mu + var / 2)

    def predictive_variance(self, mu, var):
        """E[rate] + Var[rate] with rate = exp(f) log-normal."""
        m = self.predictive_mean(mu, var)
        return m + m**2 * torch.expm1(var)


def _log_softplus(f):
    """log softplus(f) without underflow: f + log1p(-e^f/2 + ...) ~ f - e^f/2 below f = -20."""
    low = f < -20
    safe = torch.where(low, torch.zeros_like(f), f)
    return torch.where(low, f - 0.5 * torch.exp(torch.minimum(f, torch.zeros_like(f))), torch.log(F.softplus(safe)))


def _inv_softplus(y):
    """softplus^-1(y) = log(expm1(y)) = y + log(-expm1(-y)), stable for large y; -inf at 0."""
    return y + torch.log(-torch.expm1(-y))


class PoissonSoftplusLikelihood(_Poisson):
    name = "poisson_softplus"
    log_concave = True  # y log softplus(f) - softplus(f): both terms concave
    rate = staticmethod(F.softplus)

    def log_prob_f(self, y, f):
        return torch.where(y > 0, y * _log_softplus(f), torch.zeros_like(f)) - F.softplus(f) - torch.lgamma(y + 1)

    def log_prob_f_derivs(self, y, f):
        lam, s1 = F.softplus(f), torch.sigmoid(f)
        s2 = s1 * torch.sigmoid(-f)
        ratio = torch.where(y > 0, y / lam, torch.zeros_like(lam))
        return (ratio - 1) * s1, (ratio - 1) * s2 - ratio / lam * s1 * s1

    def features(self, y):
        yy = y.clamp_min(1.0)
        # the link's transition at f = 0 and the peak at rate = y (width ~ sqrt(y) in f)
        return [(torch.zeros_like(y), torch.ones_like(y)), (_inv_softplus(yy), yy.sqrt())]

    def moment_features(self):
        return [(0.0, 1.0)]

    def log_max(self, y):
        return _poisson_log_max(y)

    def mode(self, y):
        return torch.where(y > 0, _inv_softplus(y), torch.full_like(y, -math.inf))

    def predictive_mean(self, mu, var):
        return quad.expectation(F.softplus, mu, var, self._moment_features(mu))

    def predictive_variance(self, mu, var):
        """E[rate] + Var[rate] = E[rate] + E[rate^2] - E[rate]^2 (adaptive quadrature)."""
        m = self.predictive_mean(mu, var)
        second = quad.expectation(lambda f: F.softplus(f) ** 2, mu, var, self._moment_features(mu))
        return m + (second - m**2).clamp_min(0)
