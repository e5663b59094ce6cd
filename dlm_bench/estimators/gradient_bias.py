"""Gradient-bias statistics of the DLM estimators (Wei et al. 2021, Fig. 1(g)(h), supplement Fig. 8).

What upstream measures (nonconjugate/collect_gradient_demo.py): an SVGP is trained (ELBO), a fixed-hyperparameter
DLM model is built from it (kernel, mean and Z frozen, q(u) fresh at the prior, i.e. "immediately after the
initialization"), and the gradient of the full DLM loss -(sum_i log E_q[p(y_i|f_i)] - beta KL(q(u)||p(u))) / N,
beta = 0.1, w.r.t. the variational parameters (mean m and Cholesky factor) is estimated R times by each estimator
(uPS, bMC, smooth-bMC, each with L = 1, 10, 100) and compared with a reference gradient g ("exact": 10000-sample
bMC as upstream, and log-space quadrature). Per repetition r with estimate d_r:

    condition (i):  c1_r = d_r . g / ||g||^2        (Proposition 2 (i) holds with c1 = min_r c1_r > 0; 1 if d = g)
    condition (ii): c2_r = ||d_r|| / ||g||           (Proposition 2 (ii) with c2 = max_r c2_r; 1 if d = g)
    error:          e_r = ||d_r - g||^2              (upstream's per-repetition error histogram)
    bias:           b = mean_r d_r - g, reported per coordinate relative to ||g||, and ||b|| / ||g||
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .bmc import log_mean_likelihood, sampled_log_likelihoods
from .ups import ups_log_marginal


@dataclass
class BiasStats:
    label: str
    cond_i: np.ndarray  # (R,)
    cond_ii: np.ndarray  # (R,)
    bias: np.ndarray  # (M,) (mean_r d_r - g) / ||g||
    err: np.ndarray | None = None  # (R,) ||d_r - g||^2

    @property
    def bias_norm(self) -> float:
        return float(np.linalg.norm(self.bias))


def bias_stats(label: str, estimates: np.ndarray, g: np.ndarray) -> BiasStats:
    """estimates: (R, M) gradient estimates; g: (M,) reference gradient."""
    gn2 = float(g @ g)
    return BiasStats(label, estimates @ g / gn2, np.linalg.norm(estimates, axis=1) / math.sqrt(gn2),
                     (estimates.mean(0) - g) / math.sqrt(gn2), ((estimates - g) ** 2).sum(1))


class Marginals:
    """q(f)'s mean and variance under the attribute names of GPyTorch's MultivariateNormal (sampled_log_likelihoods
    reads only these two)."""

    def __init__(self, mean, variance):
        self.mean, self.variance = mean, variance


def term_estimators(likelihood, nu: float = 1e-4, sample_sizes=(1, 10, 100)):
    """label -> function(mu, var, y) returning a differentiable estimate of sum_i log E_q[p(y_i|f_i)]."""

    def bmc(L, smooth=0.0):
        return lambda mu, var, y: log_mean_likelihood(sampled_log_likelihoods(likelihood, Marginals(mu, var), y, L),
                                                      smooth).sum()

    def ups(L):
        return lambda mu, var, y: ups_log_marginal(likelihood, y, mu, var, L)[0].sum()

    out = {}
    for L in sample_sizes:  # upstream: L = 1, 10, 100 for each of uPS, bMC and smooth-bMC
        out[f"uPS (L={L})"] = ups(L)
        out[f"bMC (L={L})"] = bmc(L)
        out[f"smooth-bMC (L={L}, nu={nu:g})"] = bmc(L, nu)
    return out


def quadrature_term(likelihood):
    return lambda mu, var, y: likelihood.quadrature_log_marginal(y, mu, var).sum()


def full_loss_gradients(mu, var, kl, y, params, term, reps: int, beta: float = 0.1) -> np.ndarray:
    """(reps, P) gradients w.r.t. `params` (flattened, concatenated) of the full DLM loss
    -(term(mu, var, y) - beta * kl) / N, where term estimates sum_i log E_q[p(y_i|f_i)] (upstream's
    PredictiveLogLikelihood / MonteCarloDLM / DLM_ProductSampling value with num_data = N)."""
    n = y.shape[0]
    out = []
    for _ in range(reps):
        loss = -(term(mu, var, y) - beta * kl) / n
        grads = torch.autograd.grad(loss, params, retain_graph=True)
        out.append(torch.cat([g.detach().reshape(-1) for g in grads]).cpu().numpy().copy())
    return np.stack(out)
