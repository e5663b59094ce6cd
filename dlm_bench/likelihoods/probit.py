"""Probit (Bernoulli) likelihood p(y=1|f) = Phi(f), y in {0, 1}, everything in log space.

GPyTorch's BernoulliLikelihood clamps the probability before taking the log; here
log p(y|f) = log Phi(s f) with s = 2y - 1 via torch.special.log_ndtr (accurate far in the tails), and
the closed form log E_N(f|mu,var)[Phi(s f)] = log Phi(s mu / sqrt(1 + var)) (Wei et al. 2021, sec. 2).
`forward(f)` is Bernoulli(logits = log Phi(f) - log Phi(-f)), the predictive Bernoulli(Phi(mu / sqrt(1 + var))).
"""

from __future__ import annotations

import math

import torch

from .base import SMOOTH_BINARY_HERMITE_TIERS, BinaryLikelihood


def log_normal_cdf(x: torch.Tensor) -> torch.Tensor:
    return torch.special.log_ndtr(x)


class ProbitLikelihood(BinaryLikelihood):
    name = "probit"
    hermite_tiers = SMOOTH_BINARY_HERMITE_TIERS  # E_q[log p] by Gauss-Hermite up to var = 6 (base.py)
    has_exact_log_marginal = True

    def log_prob_f(self, y, f):
        return log_normal_cdf((2 * y - 1) * f)

    def log_prob_f_derivs(self, y, f):
        s = 2 * y - 1
        z = s * f
        r = torch.exp(-0.5 * z * z - 0.5 * math.log(2 * math.pi) - log_normal_cdf(z))  # phi(z) / Phi(z)
        return s * r, -r * (z + r)

    def features(self, y):
        return [(torch.zeros_like(y), torch.ones_like(y))]  # the transition of log Phi(s f) at f = 0

    def logits(self, f):
        return log_normal_cdf(f) - log_normal_cdf(-f)  # log Phi(f) - log Phi(-f), exact in the tails

    def exact_log_marginal(self, y, mu, var):
        return log_normal_cdf((2 * y - 1) * mu / torch.sqrt(1 + var))

    def log_max(self, y):
        return torch.zeros_like(y)  # sup_f Phi(s f) = 1 (at f -> s * inf)

    def mode(self, y):
        return (2 * y - 1) * math.inf
