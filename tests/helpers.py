"""Reusable test helpers: contract checks that every entry of a registry runs (a newly registered entry is
tested without editing the tests), and the independent references they compare against."""

from __future__ import annotations

import math
import unittest

import numpy as np
import torch
from gpytorch.distributions import MultivariateNormal
from gpytorch.test.base_likelihood_test_case import BaseLikelihoodTestCase

# --- likelihood registry ----------------------------------------------------------------------------


def make_likelihood(cls, dtype=torch.float64, noise: float = 0.5):
    """An instance of a registered likelihood class; a noise / squared scale (if it has one) set to `noise`."""
    lik = cls().to(dtype)
    if hasattr(lik, "noise"):
        lik.noise = noise
    return lik


@torch.no_grad()
def sample_targets(likelihood, f: torch.Tensor) -> torch.Tensor:
    """y ~ p(y|f) from the likelihood's own conditional distribution (valid targets for any support)."""
    return likelihood.forward(f).sample()


def gpytorch_likelihood_test_cases(registry: dict, prefix: str = "TestGPyTorchLikelihood",
                                   input_scale: float = 1.0) -> dict:
    """One GPyTorch BaseLikelihoodTestCase subclass per registered likelihood (name -> class), its tests
    unmodified; only the inputs are ours: targets drawn from the likelihood itself (GPyTorch's default targets
    are standard normal, outside the support of a Bernoulli or Poisson likelihood), and q(f) = GPyTorch's
    default N(m, A A^T + I) with the covariance scaled by input_scale^2."""
    cases = {}
    for name, cls in registry.items():
        def create_likelihood(self, _cls=cls, **kwargs):
            return _cls(**kwargs)

        def _create_targets(self, batch_shape=torch.Size(), _cls=cls):
            return sample_targets(_cls(), torch.randn(*batch_shape, 5))

        def _create_marginal_input(self, batch_shape=torch.Size()):
            q = BaseLikelihoodTestCase._create_marginal_input(self, batch_shape)
            return MultivariateNormal(q.mean, q.covariance_matrix * input_scale**2)

        cases[f"{prefix}_{name}"] = type(f"{prefix}_{name}", (BaseLikelihoodTestCase, unittest.TestCase), {
            "seed": 1, "create_likelihood": create_likelihood, "_create_targets": _create_targets,
            "_create_marginal_input": _create_marginal_input,
        })
    return cases


# --- dense float64 grid references ------------------------------------------------------------------


def dense_f_grid(mu: float, var: float, reach: float = 30.0, num: int = 300001) -> tuple[np.ndarray, np.ndarray]:
    """A float64 grid over f covering N(mu, var) (+-12 sd) and [-reach, reach] (where the likelihood peaks
    for the targets used), with trapezoid weights."""
    sd = math.sqrt(var)
    f = np.linspace(min(mu - 12 * sd, -reach), max(mu + 12 * sd, reach), num)
    w = np.full_like(f, f[1] - f[0])
    w[0] = w[-1] = w[0] / 2
    return f, w


def normal_logpdf(f, mu, var):
    return -0.5 * (np.log(2 * np.pi * var) + (f - mu) ** 2 / var)


@torch.no_grad()
def grid_log_marginal(likelihood, y: float, mu: float, var: float) -> float:
    """log int N(f|mu,var) p(y|f) df, trapezoid rule in log space, with p(y|f) = forward(f).log_prob(y)."""
    f, w = dense_f_grid(mu, var)
    ft = torch.as_tensor(f, dtype=torch.float64)
    log_p = likelihood.forward(ft).log_prob(torch.full_like(ft, y)).numpy()
    a = normal_logpdf(f, mu, var) + log_p + np.log(w)
    m = a.max()
    return float(m + np.log(np.exp(a - m).sum()))


@torch.no_grad()
def grid_expectation(fn, mu: float, var: float) -> float:
    """int N(f|mu,var) fn(f) df (fn: float64 tensor -> tensor), trapezoid rule."""
    f, w = dense_f_grid(mu, var)
    values = fn(torch.as_tensor(f, dtype=torch.float64)).numpy()
    return float((np.exp(normal_logpdf(f, mu, var)) * w * values).sum())
