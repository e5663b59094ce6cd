"""bMC (Wei et al. 2021, sec. 3): reparameterised Monte Carlo estimates of the likelihood term.

With f_i^(l) = mu_i + sqrt(v_i) eps_l, eps_l ~ N(0, 1), l = 1..L (independent per point, since the loss
term only needs the marginals q(f_i)):

    DLM:   log E_q[p(y_i|f_i)] ~= logsumexp_l log p(y_i|f_i^(l)) - log L   (biased low, Jensen)
    ELBO:  E_q[log p(y_i|f_i)] ~= mean_l log p(y_i|f_i^(l))                 (unbiased)

Gradients flow through the samples (the paper's bMC gradient is the gradient of the first line).
"""

from __future__ import annotations

import math

import torch

from ..training.gpytorch_internals import ApproximateMLL
from .quadrature import log_lik_fn


def sampled_log_likelihoods(likelihood, approximate_dist_f, target: torch.Tensor, num_samples: int) -> torch.Tensor:
    """log p(y_i | f_i^(l)), shape (L, N)."""
    mean, std = approximate_dist_f.mean, approximate_dist_f.variance.clamp_min(0.0).sqrt()
    eps = torch.randn((num_samples,) + tuple(mean.shape), dtype=mean.dtype, device=mean.device)
    return log_lik_fn(likelihood)(target, mean + std * eps)


def log_mean_likelihood(log_p: torch.Tensor, nu: float = 0.0) -> torch.Tensor:
    """log(1/L sum_l p(y_i|f_i^(l)) + nu) per point from the (L, ...) log-likelihoods: bMC's estimate (nu = 0) or
    smooth-bMC's (estimators/smooth_bmc.py), in log space."""
    log_mean = torch.logsumexp(log_p, dim=0) - math.log(log_p.shape[0])
    if nu == 0:
        return log_mean
    return torch.logaddexp(log_mean, torch.full_like(log_mean, math.log(nu)))


class _BMC(ApproximateMLL):
    def __init__(self, likelihood, model, num_data, beta=1.0, num_samples: int = 10, combine_terms=True):
        if num_samples < 1:
            raise ValueError(f"num_samples must be >= 1, got {num_samples}")
        super().__init__(likelihood, model, num_data, beta=beta, combine_terms=combine_terms)
        self.num_samples = int(num_samples)


class BMCPredictiveLogLikelihood(_BMC):
    """Log-loss DLM with the bMC estimate of sum_i log E_q[p(y_i|f_i)]."""

    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        log_p = sampled_log_likelihoods(self.likelihood, approximate_dist_f, target, self.num_samples)
        return log_mean_likelihood(log_p).sum(-1)


class BMCVariationalELBO(_BMC):
    """(beta-)ELBO with the sample average of log p(y_i|f_i)."""

    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        log_p = sampled_log_likelihoods(self.likelihood, approximate_dist_f, target, self.num_samples)
        return log_p.mean(0).sum(-1)
