"""Gaussian likelihood: GPyTorch's GaussianLikelihood (closed forms for everything: ELBO term, log-loss DLM
term, predictive N(mu, var + noise)) plus the predictive-metrics contract of likelihoods/base.py. A subclass
that adds methods only, so parameters, state dicts and every computation GPyTorch does are unchanged."""

from __future__ import annotations

import math

import gpytorch
import torch

LOG_2PI = math.log(2 * math.pi)


def gaussian_log_prob(y, f, noise, log_noise=None):
    """log N(y | f, noise) = -(log 2 pi noise + (y - f)^2 / noise) / 2 (the point density the expectations below
    integrate; SAVIGP's Monte Carlo terms). `log_noise` as in gaussian_expected_log_prob."""
    log_noise = torch.log(noise) if log_noise is None else log_noise
    return -0.5 * (LOG_2PI + log_noise + (y - f) ** 2 / noise)


def gaussian_expected_log_prob(y, mu, var, noise, log_noise=None):
    """E_N(f|mu,var)[log N(y|f, noise)] = -(log 2 pi noise + ((y - mu)^2 + var) / noise) / 2. `log_noise`: pass
    log(noise) when the caller holds it (SAVIGP's log sigma^2 parameter), so no log(exp(.)) round trip."""
    log_noise = torch.log(noise) if log_noise is None else log_noise
    return -0.5 * (LOG_2PI + log_noise + ((y - mu) ** 2 + var) / noise)


def gaussian_log_marginal(y, mu, var, noise):
    """log E_N(f|mu,var)[N(y|f, noise)] = log N(y | mu, var + noise)."""
    pred_var = var + noise
    return -0.5 * (LOG_2PI + torch.log(pred_var) + (y - mu) ** 2 / pred_var)


class GaussianLikelihood(gpytorch.likelihoods.GaussianLikelihood):
    name = "gaussian"
    metrics = ("nll", "mse")
    raw_units = True
    point_estimate = "mean"

    def predictive_log_marginal(self, y, mu, var):
        """log N(y | mu, var + noise)."""
        return gaussian_log_marginal(y, mu, var, self.noise.reshape(-1)[0])

    def predictive_mean(self, mu, var):
        return mu

    def predictive_variance(self, mu, var):
        return var + self.noise.reshape(-1)[0]

    def point_prediction(self, mu, var):
        return mu
