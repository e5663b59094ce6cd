"""Gaussian likelihood: GPyTorch's GaussianLikelihood (closed forms for everything: ELBO term, log-loss DLM
term, predictive N(mu, var + noise)) plus the predictive-metrics contract of likelihoods/base.py. A subclass
that adds methods only, so parameters, state dicts and every computation GPyTorch does are unchanged."""

from __future__ import annotations

import math

import gpytorch
import torch


class GaussianLikelihood(gpytorch.likelihoods.GaussianLikelihood):
    name = "gaussian"
    metrics = ("nll", "mse")
    raw_units = True
    point_estimate = "mean"

    def predictive_log_marginal(self, y, mu, var):
        """log N(y | mu, var + noise)."""
        pred_var = var + self.noise.reshape(-1)[0]
        return -0.5 * (torch.log(2 * math.pi * pred_var) + (y - mu) ** 2 / pred_var)

    def predictive_mean(self, mu, var):
        return mu

    def predictive_variance(self, mu, var):
        return var + self.noise.reshape(-1)[0]

    def point_prediction(self, mu, var):
        return mu
