"""uPS (Wei et al. 2021, Proposition 1 and supplement sec. 1): unbiased gradients of log E_q[p(y|f)] by
product sampling.

For q(f) = N(mu, sigma^2) and samples f^(l) from q~(f) ∝ q(f) p(y|f), the average of
grad_theta log q(f^(l)|theta) is an unbiased estimate of grad_theta log E_q[p(y|f)]:

    d/dmu  = mean_l (f^(l) - mu) / sigma^2
    d/dvar = mean_l ((f^(l) - mu)^2 / sigma^4 - 1 / sigma^2) / 2

`UPSLogMarginal` is the autograd Function that delivers this gradient; its forward value is the
deterministic log E_q[p(y|f)] (closed form or quadrature), so the loss curve is the true objective.

Rejection sampler (supplement sec. 1): proposal h2 = N(mu, n sigma^2), K = l_max = sup_f p(y|f).
With r = sigma sqrt(log n / (1 - 1/n)) (r = sigma at n = 1) the densities q and h2 cross at mu +- r;
m1 = max of p(y|.) on [a, b] = [mu - r, mu + r] (the endpoints, plus l_max if the likelihood's mode lies
in [a, b] — e.g. log y for Poisson with the exp link), m2 = min on [a, b] of h2/q = 1/sqrt(n). n is the
largest integer <= max_n (10) with m1 <= m2 l_max; then q(f) p(y|f) <= l_max h2(f) everywhere, and a
proposal f is accepted with probability q(f) p(y|f) / (l_max h2(f)). (The upstream code's interval
test `log y > mu - std and log y < mu - std` is never true; here it is a <= mode <= b.)

Note: with K = l_max the overall acceptance rate is E_q[p(y|f)] / l_max for every valid n; n only
changes where the proposals fall, not how many are needed on average.

Vectorised hybrid: two vectorised proposal rounds for all (sample, example) pairs; a pair keeps its first
accepted proposal; the pairs left over are sampled per example (in vectorised chunks for that example).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from gpytorch.mlls._approximate_mll import _ApproximateMarginalLogLikelihood

from ..likelihoods.quadrature import gh_log_marginal

MAX_N = 10
MAX_PROPOSALS_PER_EXAMPLE = 10_000_000
LOG_2PI = math.log(2 * math.pi)


@dataclass
class UPSStats:
    samples: int = 0  # accepted samples returned
    proposals: int = 0  # proposals a sequential sampler would have drawn (round 1: 1, round 2: 2, ...)
    fallback: int = 0  # (sample, example) pairs left after the two vectorised rounds

    @property
    def proposals_per_sample(self) -> float:
        return self.proposals / max(self.samples, 1)

    def add(self, other: "UPSStats") -> None:
        self.samples += other.samples
        self.proposals += other.proposals
        self.fallback += other.fallback


def _log_lik(likelihood, y, f):
    direct = getattr(likelihood, "log_prob_f", None)
    return direct(y, f) if direct is not None else likelihood.forward(f).log_prob(y)


@torch.no_grad()
def proposal_width(likelihood, y, mu, sigma, max_n: int = MAX_N) -> torch.Tensor:
    """The multiplier n_i (1..max_n) of the proposal variance n sigma^2, per example."""
    ns = torch.arange(1, max_n + 1, dtype=mu.dtype, device=mu.device)
    ratio = torch.where(ns > 1, torch.log(ns) / (1 - 1 / ns), torch.ones_like(ns))  # n -> 1 limit is 1
    r = sigma.unsqueeze(0) * torch.sqrt(ratio).unsqueeze(-1)  # (n, N)
    a, b = mu - r, mu + r
    yy = y.expand_as(a)
    log_m1 = torch.maximum(_log_lik(likelihood, yy, a), _log_lik(likelihood, yy, b))
    log_max = likelihood.log_max(y).expand_as(a)
    mode = likelihood.mode(y).expand_as(a)
    log_m1 = torch.where((a <= mode) & (mode <= b), torch.maximum(log_m1, log_max), log_m1)
    ok = log_m1 <= log_max - 0.5 * torch.log(ns).unsqueeze(-1)
    ok[0] = True  # n = 1: h2 = q, always valid with K = l_max
    idx = torch.arange(1, max_n + 1, device=mu.device).unsqueeze(-1) * ok  # 0 where not ok
    return idx.max(0).values.to(mu.dtype)


def _log_accept(likelihood, y, f, mu, var, n, log_max):
    """log [q(f) p(y|f) / (l_max h2(f))], <= 0 by construction."""
    log_q = -0.5 * (LOG_2PI + torch.log(var) + (f - mu) ** 2 / var)
    log_h2 = -0.5 * (LOG_2PI + torch.log(n * var) + (f - mu) ** 2 / (n * var))
    return _log_lik(likelihood, y, f) + log_q - log_max - log_h2


@torch.no_grad()
def ups_sample(likelihood, y, mu, var, num_samples: int, max_n: int = MAX_N, rounds: int = 2):
    """Exact samples from q~(f_i) ∝ N(f_i|mu_i, var_i) p(y_i|f_i): tensor (num_samples, N) and UPSStats."""
    y, mu, var = y.detach(), mu.detach(), var.detach().clamp_min(1e-12)
    sigma = var.sqrt()
    n = proposal_width(likelihood, y, mu, sigma, max_n)
    log_max = likelihood.log_max(y)
    shape = (num_samples,) + tuple(mu.shape)
    out = torch.full(shape, float("nan"), dtype=mu.dtype, device=mu.device)
    done = torch.zeros(shape, dtype=torch.bool, device=mu.device)
    stats = UPSStats(samples=int(done.numel()))
    spread = torch.sqrt(n) * sigma
    for k in range(1, rounds + 1):
        f = mu + spread * torch.randn(shape, dtype=mu.dtype, device=mu.device)
        accept = torch.log(torch.rand(shape, dtype=mu.dtype, device=mu.device)) < _log_accept(
            likelihood, y, f, mu, var, n, log_max)
        new = accept & ~done
        out[new] = f[new]
        stats.proposals += k * int(new.sum())
        done |= accept
    left = (~done).sum(0)  # per example
    stats.fallback = int(left.sum())
    for i in torch.nonzero(left).flatten().tolist():
        need, got, drawn = int(left[i]), [], 0
        chunk = max(64, 4 * need)
        while need > 0:
            if drawn >= MAX_PROPOSALS_PER_EXAMPLE:
                raise RuntimeError(
                    f"uPS: no sample after {drawn} proposals for example {i} (mu={mu[i]:.3g}, var={var[i]:.3g}, "
                    f"y={y[i]:.3g}); acceptance E_q[p(y|f)]/l_max is too small")
            f = mu[i] + spread[i] * torch.randn(chunk, dtype=mu.dtype, device=mu.device)
            acc = torch.nonzero(torch.log(torch.rand(chunk, dtype=mu.dtype, device=mu.device)) < _log_accept(
                likelihood, y[i], f, mu[i], var[i], n[i], log_max[i])).flatten()
            take = acc[:need]
            got.append(f[take])
            # sequential count: proposals up to (and including) the last one taken, or the whole chunk
            drawn += int(take[-1]) + 1 if len(take) == need else chunk
            need -= len(take)
        stats.proposals += rounds * int(left[i]) + drawn
        out[~done[:, i], i] = torch.cat(got)
    return out, stats


class UPSLogMarginal(torch.autograd.Function):
    """Forward: the given value of log E_q[p(y|f)]; backward: the uPS estimate from `samples` (L, N)."""

    @staticmethod
    def forward(ctx, mu, var, value, samples):
        ctx.save_for_backward(mu, var, samples)
        return value.clone()

    @staticmethod
    def backward(ctx, grad_output):
        mu, var, f = ctx.saved_tensors
        d = f - mu
        grad_mu = (d / var).mean(0)
        grad_var = (0.5 * (d**2 / var**2 - 1 / var)).mean(0)
        return grad_output * grad_mu, grad_output * grad_var, None, None


def ups_log_marginal(likelihood, y, mu, var, num_samples: int, max_n: int = MAX_N):
    """Per-point log E_q[p(y|f)] whose gradient w.r.t. (mu, var) is the uPS estimate; also the stats."""
    samples, stats = ups_sample(likelihood, y, mu, var, num_samples, max_n)
    with torch.no_grad():
        if hasattr(likelihood, "predictive_log_marginal"):
            value = likelihood.predictive_log_marginal(y, mu, var)
        else:
            value = gh_log_marginal(lambda yy, f: _log_lik(likelihood, yy, f), y, mu, var)
    return UPSLogMarginal.apply(mu, var, value, samples), stats


class UPSPredictiveLogLikelihood(_ApproximateMarginalLogLikelihood):
    """Log-loss DLM with uPS gradients of the likelihood term; `stats` accumulates sampler statistics."""

    def __init__(self, likelihood, model, num_data, beta=1.0, num_samples: int = 10, combine_terms=True):
        if num_samples < 1:
            raise ValueError(f"num_samples must be >= 1, got {num_samples}")
        if not hasattr(likelihood, "log_max"):
            raise ValueError(f"uPS needs a likelihood with log_max/mode (not {type(likelihood).__name__})")
        super().__init__(likelihood, model, num_data, beta=beta, combine_terms=combine_terms)
        self.num_samples = int(num_samples)
        self.stats = UPSStats()

    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        value, stats = ups_log_marginal(self.likelihood, target, approximate_dist_f.mean,
                                        approximate_dist_f.variance, self.num_samples)
        self.stats.add(stats)
        return value.sum(-1)
