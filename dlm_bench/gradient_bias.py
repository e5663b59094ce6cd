"""Gradient-bias statistics of the DLM estimators (Wei et al. 2021, Fig. 1(g)(h), supplement Fig. 8).

At a model state (the paper: right after initialisation, abalone, Poisson), the gradient of the DLM
likelihood term sum_i log E_q[p(y_i|f_i)] w.r.t. the variational mean m is estimated R times by each
estimator (uPS, bMC with L = 1, 10, 100, smooth-bMC) and compared with a reference gradient g
("exact": 10000-sample bMC as in the paper, and log-space quadrature). Per repetition r with estimate d_r:

    condition (i):  c1_r = d_r . g / ||g||^2        (Proposition 2 (i) holds with c1 = min_r c1_r > 0; 1 if d = g)
    condition (ii): c2_r = ||d_r|| / ||g||           (Proposition 2 (ii) with c2 = max_r c2_r; 1 if d = g)
    bias:           b = mean_r d_r - g, reported per coordinate relative to ||g||, and ||b|| / ||g||
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .estimators.bmc import sampled_log_likelihoods
from .estimators.ups import ups_log_marginal
from .likelihoods.quadrature import gh_log_marginal


@dataclass
class BiasStats:
    label: str
    cond_i: np.ndarray  # (R,)
    cond_ii: np.ndarray  # (R,)
    bias: np.ndarray  # (M,) (mean_r d_r - g) / ||g||

    @property
    def bias_norm(self) -> float:
        return float(np.linalg.norm(self.bias))


def bias_stats(label: str, estimates: np.ndarray, g: np.ndarray) -> BiasStats:
    """estimates: (R, M) gradient estimates; g: (M,) reference gradient."""
    gn2 = float(g @ g)
    return BiasStats(label, estimates @ g / gn2, np.linalg.norm(estimates, axis=1) / math.sqrt(gn2),
                     (estimates.mean(0) - g) / math.sqrt(gn2))


class _Marginals:
    def __init__(self, mean, variance):
        self.mean, self.variance = mean, variance


def term_estimators(likelihood, nu: float = 1e-4):
    """label -> function(mu, var, y) returning a differentiable estimate of sum_i log E_q[p(y_i|f_i)]."""

    def bmc(L, smooth=0.0):
        def fn(mu, var, y):
            log_p = sampled_log_likelihoods(likelihood, _Marginals(mu, var), y, L)
            log_mean = torch.logsumexp(log_p, 0) - math.log(L)
            if smooth:
                log_mean = torch.logaddexp(log_mean, torch.full_like(log_mean, math.log(smooth)))
            return log_mean.sum()
        return fn

    def ups(L):
        return lambda mu, var, y: ups_log_marginal(likelihood, y, mu, var, L)[0].sum()

    return {"uPS (L=1)": ups(1), "uPS (L=10)": ups(10), "bMC (L=1)": bmc(1), "bMC (L=10)": bmc(10),
            "bMC (L=100)": bmc(100), f"smooth-bMC (L=10, nu={nu:g})": bmc(10, nu)}


def quadrature_term(likelihood):
    log_lik = getattr(likelihood, "log_prob_f")
    return lambda mu, var, y: gh_log_marginal(log_lik, y, mu, var).sum()


def gradient_samples(marginals_fn, param: torch.Tensor, y: torch.Tensor, term, reps: int) -> np.ndarray:
    """(reps, M) gradients of term(mu, var, y) w.r.t. `param`, with (mu, var) = marginals_fn()."""
    out = []
    mu, var = marginals_fn()
    for _ in range(reps):
        (g,) = torch.autograd.grad(term(mu, var, y), param, retain_graph=True)
        out.append(g.detach().reshape(-1).cpu().numpy().copy())
    return np.stack(out)
