"""SAVIGP observation models (Dezfouli & Bonilla 2015): log p(y_n | f_n) for Q latent values f_n.

Every likelihood maps latent samples F (..., N, Q) and targets y (N,) to log-densities (..., N).
`expected_log_prob` is the closed form E_{N(f; b, Sigma)}[log p(y|f)] where one exists (the `exact`
estimator); `log_predictive` is log int p(y|f) N(f; b, Sigma) df, closed form or by Monte Carlo.
The scalar likelihoods that the likelihood layer (dlm_bench/likelihoods) also has are thin adapters over it
(issue 26: each likelihood's math lives once): `LogisticPM` over LogisticLikelihood (labels -1/+1 -> 0/1),
`LGCP` over PoissonExpLikelihood (log-rate f + log offset); `Gaussian` keeps upstream's log sigma^2 parameter
(what L-BFGS moves) and takes its density and closed forms from likelihoods/gaussian.py, and so does the warped
Gaussian in the warped variable t(y) (plus the Jacobian log t'(y)). What is only here, and why, is said in the
docstrings of `WarpedGaussian` and `Softmax`.
"""

from __future__ import annotations

import abc
import math

import torch
from torch import nn

from ..errors import ConfigError
from ..likelihoods import LogisticLikelihood, PoissonExpLikelihood
from ..likelihoods import quadrature as quad
from ..likelihoods.gaussian import gaussian_expected_log_prob, gaussian_log_marginal, gaussian_log_prob

# upstream experiment_setup.py: the warping parameters are fixed (a, b as logs), only sigma^2 is learned
WARP_PARAMS = {
    "creep": ([3.8715, 3.8898, 2.8759], [1.5925, -1.3360, -2.0289], [0.7940, -4.1855, -3.0289]),
    "abalone": ([-2.0485, 1.7991, 1.5814], [2.7421, 0.9426, 1.7804], [0.1856, 0.7024, -0.7421]),
}


class SavigpLikelihood(nn.Module, abc.ABC):
    num_latent = 1
    has_exact = False

    @abc.abstractmethod
    def log_prob(self, f: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """log p(y_n | f_n): F (..., N, Q), y (N,) -> (..., N)."""

    def log_predictive(self, b, var, y, eps):
        """log int p(y|f) N(f; b, var) df by Monte Carlo with standard-normal eps (S, N, Q); b, var (N, Q)."""
        f = b + var.sqrt() * eps
        lp = self.log_prob(f, y)
        return torch.logsumexp(lp, 0) - math.log(lp.shape[0])


class Gaussian(SavigpLikelihood):
    has_exact = True

    def __init__(self, noise_init: float = 1.0):
        super().__init__()
        self.log_sigma2 = nn.Parameter(torch.tensor(math.log(noise_init), dtype=torch.float64))

    @property
    def sigma2(self):
        return self.log_sigma2.exp()

    def log_prob(self, f, y):
        return gaussian_log_prob(y, f[..., 0], self.sigma2, log_noise=self.log_sigma2)

    def expected_log_prob(self, b, var, y):
        return gaussian_expected_log_prob(y, b[..., 0], var[..., 0], self.sigma2, log_noise=self.log_sigma2)

    def log_predictive(self, b, var, y, eps=None):
        return gaussian_log_marginal(y, b[..., 0], var[..., 0], self.sigma2)

    def predict_mean(self, b, var):
        return b[..., 0]


class WarpedGaussian(Gaussian):
    """Warped GP (Snelson et al. 2004): p(y|f) = t'(y) N(t(y); f, sigma^2), t(y) = y + sum_i a_i tanh(b_i (y + c_i)).

    The Gaussian in z = t(y): log-density, E_q[log p] and log E_q[p] are likelihoods/gaussian.py's at z plus
    log t'(y). Not a class of the likelihood layer: the layer's likelihoods are the DLM paper's (GPyTorch
    likelihoods with a task and predictive metrics in y), while this one lives in the warped space with the
    warp fixed per dataset (upstream's creep / abalone parameters) and its predictive mean needs t^-1; only the
    SAVIGP experiments use it. Upstream's log sigma^2 parameter is Gaussian's."""

    def __init__(self, warp: str = "creep", noise_init: float = 0.01):
        if warp not in WARP_PARAMS:
            raise ConfigError(f"savigp.warp must be one of {', '.join(WARP_PARAMS)}, got {warp!r}")
        super().__init__(noise_init)
        log_a, log_b, c = WARP_PARAMS[warp]
        self.register_buffer("a", torch.tensor(log_a, dtype=torch.float64).exp())
        self.register_buffer("b", torch.tensor(log_b, dtype=torch.float64).exp())
        self.register_buffer("c", torch.tensor(c, dtype=torch.float64))

    def t(self, y):
        return y + (self.a * torch.tanh(self.b * (y.unsqueeze(-1) + self.c))).sum(-1)

    def log_dt(self, y):
        th = torch.tanh(self.b * (y.unsqueeze(-1) + self.c))
        return torch.log1p((self.a * self.b * (1 - th**2)).sum(-1))

    def t_inverse(self, z, iters: int = 80):
        """t is strictly increasing: bisection on [z - sum a, z + sum a] (t(y) - y is bounded by sum |a|)."""
        lo, hi = z - self.a.sum() - 1.0, z + self.a.sum() + 1.0
        for _ in range(iters):
            mid = 0.5 * (lo + hi)
            below = self.t(mid) < z
            lo, hi = torch.where(below, mid, lo), torch.where(below, hi, mid)
        return 0.5 * (lo + hi)

    def log_prob(self, f, y):
        return self.log_dt(y) + gaussian_log_prob(self.t(y), f[..., 0], self.sigma2, log_noise=self.log_sigma2)

    def expected_log_prob(self, b, var, y):
        return self.log_dt(y) + gaussian_expected_log_prob(self.t(y), b[..., 0], var[..., 0], self.sigma2,
                                                           log_noise=self.log_sigma2)

    def log_predictive(self, b, var, y, eps=None):
        return self.log_dt(y) + gaussian_log_marginal(self.t(y), b[..., 0], var[..., 0], self.sigma2)

    def predict_mean(self, b, var):
        """E[y*] = E[t^{-1}(z)], z ~ N(b, var + sigma^2), by the likelihood layer's adaptive rule with a feature at
        each warp step: t^{-1} bends at z = t(-c_i) over about a_i + 1/b_i. (60-node Gauss-Hermite, used until
        2026-11-25, was off by 1e-3 at abalone's var = 4: the steps are about 0.2 wide in z.)"""
        centres = self.t(-self.c)
        features = [(centres[i], self.a[i].abs() + 1 / self.b[i]) for i in range(self.c.numel())]
        return quad.expectation(self.t_inverse, b[..., 0], var[..., 0] + self.sigma2.detach(), features)


class Softmax(SavigpLikelihood):
    """Multi-class: p(y = c | f) = softmax(f)_c with Q = number of classes, y in {0, ..., Q-1}.

    Not built on the likelihood layer: every likelihood there has one latent value per point (GPyTorch's
    one-dimensional likelihoods, integrated by the 1-d rules of likelihoods/quadrature), while this one takes
    Q latent values per point, and E_q[log p] over a Q-dimensional Gaussian has no closed form and no 1-d rule;
    SAVIGP estimates it by Monte Carlo (the L_ell estimator and its gradients, eqs. 12-14), as upstream does."""

    def __init__(self, num_classes: int):
        super().__init__()
        self.num_latent = num_classes

    def log_prob(self, f, y):
        # over the classes with the points innermost (a transposed view): torch's log_softmax over a last dimension
        # of 3 classes is 3x slower on (S, N, Q) sample arrays (docs/performance.md)
        ft = f.transpose(-1, -2)  # (..., Q, N)
        idx = y.long().reshape((1,) * (f.dim() - 1) + (-1,)).expand(*ft.shape[:-2], 1, ft.shape[-1])
        return torch.log_softmax(ft, -2).gather(-2, idx)[..., 0, :]

    def class_probs(self, b, var, eps):
        return torch.softmax(b + var.sqrt() * eps, -1).mean(0)


class LogisticPM(SavigpLikelihood):
    """Binary, labels y in {-1, +1}: p(y|f) = sigma(y f) (upstream's sign, bug 2 of spec 3.4, is not copied)."""

    def __init__(self):
        super().__init__()
        self.layer = LogisticLikelihood()

    def log_prob(self, f, y):
        return self.layer.log_prob_f((y + 1) / 2, f[..., 0])

    def class_probs(self, b, var, eps):
        return torch.sigmoid(b + var.sqrt() * eps)[..., 0].mean(0)  # p(y = +1)


class LGCP(SavigpLikelihood):
    """Log-Gaussian Cox process on bins: y ~ Poisson(offset * exp(f)) (offset = bin size / exposure)."""

    has_exact = True

    def __init__(self, offset: float = 1.0):
        super().__init__()
        self.log_offset = math.log(offset)
        self.layer = PoissonExpLikelihood()

    def log_prob(self, f, y):
        return self.layer.log_prob_f(y, f[..., 0] + self.log_offset)

    def expected_log_prob(self, b, var, y):
        return self.layer.exact_expected_log_prob(y, b[..., 0] + self.log_offset, var[..., 0])


_MAKERS = {  # savigp.likelihood -> the model, from build_likelihood's keywords
    "gaussian": lambda kw: Gaussian(kw["noise_init"]),
    "warp": lambda kw: WarpedGaussian(kw["warp"], kw["noise_init"]),
    "softmax": lambda kw: Softmax(kw["num_classes"]),
    "logistic": lambda kw: LogisticPM(),
    "lgcp": lambda kw: LGCP(kw["offset"]),
}
LIKELIHOODS = tuple(_MAKERS)


def build_likelihood(name: str, *, num_classes: int = 2, noise_init: float = 1.0, warp: str = "creep",
                     offset: float = 1.0) -> SavigpLikelihood:
    if name not in _MAKERS:
        raise ConfigError(f"unknown savigp.likelihood {name!r}; valid choices: {', '.join(LIKELIHOODS)}")
    return _MAKERS[name](dict(num_classes=num_classes, noise_init=noise_init, warp=warp, offset=offset))
