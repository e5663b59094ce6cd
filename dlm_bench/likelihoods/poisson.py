"""Poisson likelihoods for counts y in {0, 1, 2, ...}.

* `PoissonExpLikelihood`: rate exp(f). log p(y|f) = y f - exp(f) - lgamma(y+1); the ELBO term has the
  closed form E_N(f|mu,var)[log p] = y mu - exp(mu + var/2) - lgamma(y+1); log E_q[p(y|f)] has none
  (adaptive log-space Gauss-Hermite). Predictive mean E[y] = E_q[exp f] = exp(mu + var/2).
* `PoissonSoftplusLikelihood`: rate softplus(f) (gentler tails); everything by quadrature.

For uPS: the maximum of p(y|f) over f is at rate = y (f = log y, or softplus^-1(y)); for y = 0 the
likelihood decreases in f and its supremum 1 is approached at f -> -inf.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .base import ScalarLikelihood
from .quadrature import gh_expectation


def _poisson_log_max(y):
    """log p(y | rate = y) = y log y - y - lgamma(y+1), with 0 log 0 = 0."""
    return torch.xlogy(y, y) - y - torch.lgamma(y + 1)


class PoissonExpLikelihood(ScalarLikelihood):
    name = "poisson_exp"
    has_exact_expected_log_prob = True

    def log_prob_f(self, y, f):
        return y * f - torch.exp(f) - torch.lgamma(y + 1)

    def log_prob_f_derivs(self, y, f):
        e = torch.exp(f)
        return y - e, -e

    def exact_expected_log_prob(self, y, mu, var):
        return y * mu - torch.exp(mu + var / 2) - torch.lgamma(y + 1)

    def log_max(self, y):
        return _poisson_log_max(y)

    def mode(self, y):
        return torch.where(y > 0, torch.log(y), torch.full_like(y, -math.inf))

    def predictive_mean(self, mu, var):
        return torch.exp(mu + var / 2)


def _inv_softplus(y):
    """softplus^-1(y) = log(expm1(y)) = y + log(-expm1(-y)), stable for large y; -inf at 0."""
    return y + torch.log(-torch.expm1(-y))


class PoissonSoftplusLikelihood(ScalarLikelihood):
    name = "poisson_softplus"

    def log_prob_f(self, y, f):
        return torch.xlogy(y, F.softplus(f)) - F.softplus(f) - torch.lgamma(y + 1)

    def log_max(self, y):
        return _poisson_log_max(y)

    def mode(self, y):
        return torch.where(y > 0, _inv_softplus(y), torch.full_like(y, -math.inf))

    def predictive_mean(self, mu, var):
        return gh_expectation(F.softplus, mu, var, num_nodes=40)
