"""Student-t likelihood for robust regression: y = f + scale * t_df, df fixed (default 4), the scale
learned (exposed as `noise` = scale^2 so run.json's noise_var has the usual meaning of a squared scale).
Both expectations by the adaptive rule of likelihoods/quadrature/, with geometric panels around f = y (the
feature of width `scale`); unimodal in f with its mode at f = y, not log-concave.
`forward(f)` is torch's StudentT(df, f, scale); the predictive has mean mu and variance var + scale^2 df/(df-2)."""

from __future__ import annotations

import math

import gpytorch
import torch

from .base import ScalarLikelihood


class StudentTLikelihood(ScalarLikelihood):
    name = "student_t"
    metrics = ("nll", "mse")
    raw_units = True
    # bounded, polynomial tails: q(f) p(y|f) has its mass near mu (q's panels) or near y (the feature's panels)
    tilted_centre = False

    def __init__(self, df: float = 4.0):
        super().__init__()
        self.df = float(df)
        self.register_parameter("raw_noise", torch.nn.Parameter(torch.zeros(1)))
        self.register_constraint("raw_noise", gpytorch.constraints.GreaterThan(1e-4))

    @property
    def noise(self) -> torch.Tensor:
        return self.raw_noise_constraint.transform(self.raw_noise)

    @noise.setter
    def noise(self, value) -> None:
        value = torch.as_tensor(value, dtype=self.raw_noise.dtype, device=self.raw_noise.device)
        self.initialize(raw_noise=self.raw_noise_constraint.inverse_transform(value.reshape(1)))

    def _log_norm(self):
        nu = self.df
        return math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)

    def log_prob_f(self, y, f):
        nu, s2 = self.df, self.noise.reshape(())
        return self._log_norm() - 0.5 * torch.log(s2) - (nu + 1) / 2 * torch.log1p((y - f) ** 2 / (nu * s2))

    def log_prob_f_derivs(self, y, f):
        nu, s2 = self.df, self.noise.reshape(()).detach()
        r = y - f
        den = nu * s2 + r * r
        return (nu + 1) * r / den, (nu + 1) * (r * r - nu * s2) / (den * den)

    def features(self, y):
        s = self.noise.reshape(()).detach().sqrt()
        return [(y, torch.ones_like(y) * s)]

    def forward(self, function_samples, *args, **kwargs):
        return torch.distributions.StudentT(self.df, loc=function_samples, scale=self.noise.reshape(()).sqrt())

    def predictive_mean(self, mu, var):
        return mu  # the predictive is symmetric about mu (mean = median = mode; df > 1)

    def predictive_variance(self, mu, var):
        return var + self.noise.reshape(()) * self.df / (self.df - 2)  # df > 2

    def point_prediction(self, mu, var):
        return mu

    def log_max(self, y):
        return torch.full_like(y, self._log_norm()) - 0.5 * torch.log(self.noise.reshape(()))

    def mode(self, y):
        return y
