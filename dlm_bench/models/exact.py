"""Full GP regression (the PAC-GP paper's "full-GP" baseline): a GPyTorch ExactGP with zero mean, trained
on ExactMarginalLogLikelihood (Reeb et al. 2018, eq. 33; GPyTorch divides it by N)."""

from __future__ import annotations

import warnings

import gpytorch
import torch

from ..pac.kl import kl_full_gp
from .base import ModelBundle
from .components import gaussian_likelihood, initial_kernel


class _ExactGP(gpytorch.models.ExactGP):
    def __init__(self, X, y, likelihood, kernel):
        super().__init__(X, y, likelihood)
        self.mean_module = gpytorch.means.ZeroMean()
        self.covar_module = kernel

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


class ExactGPBundle(ModelBundle):
    def __init__(self, kernel, likelihood, X_train, y_train):
        super().__init__()
        self.likelihood = likelihood
        self.model = _ExactGP(X_train, y_train, likelihood, kernel)
        self.mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, self.model)

    @property
    def kernel(self):
        return self.model.covar_module

    def loss(self, X, y):
        return -self.mll(self.model(X), y)

    def clear_caches(self):
        self.model.prediction_strategy = None

    @torch.no_grad()
    def predict_f(self, X):
        self.model.eval()
        with warnings.catch_warnings(), gpytorch.settings.fast_pred_var(False), \
                gpytorch.settings.skip_posterior_variances(False):
            # predicting at the training inputs (the Gibbs training risk) is intended
            warnings.simplefilter("ignore", gpytorch.utils.warnings.GPInputWarning)
            f = self.model(X)
            return f.mean, f.variance.clamp_min(0.0)

    def pac_kl(self):
        X, y = self.model.train_inputs[0], self.model.train_targets
        return kl_full_gp(self.kernel(X).to_dense(), self.noise, y)


def build_exact_gp(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> ExactGPBundle:
    m = cfg.model
    kernel = initial_kernel(cfg, X_train)
    likelihood = gaussian_likelihood(m)
    return ExactGPBundle(kernel, likelihood, X_train, y_train)
