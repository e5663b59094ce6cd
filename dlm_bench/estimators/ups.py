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

Vectorised: every (sample, example) pair runs its own rejection sampler; the proposals of all pairs are
drawn in vectorised rounds (one proposal each, then blocks sized from the expected count l_max / E_q p
for the pairs still without a sample), see `ups_sample`. No per-example Python loop.

Likelihood parameters (e.g. the Student-t scale): d/dphi log E_q[p_phi(y|f)] is taken exactly from the
value (closed form or quadrature, with mu and var held fixed), not sampled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch

from ..likelihoods import quadrature as quad
from .bmc import _BMC
from .quadrature import log_lik_fn
from .quadrature import log_marginal as quadrature_log_marginal

MAX_N = 10
# K: proposals a (sample, example) pair may draw before its sample comes from the exact fallback (the inverse
# CDF of the tilted density on the adaptive grid of likelihoods/quadrature/, `quad.sample_tilted`)
MAX_PROPOSALS_PER_EXAMPLE = 10_000


@dataclass
class UPSStats:
    samples: int = 0  # accepted samples returned
    proposals: int = 0  # proposals a sequential sampler would have drawn (for each pair: up to its first accept)
    fallback: int = 0  # (sample, example) pairs not accepted in the first vectorised round
    rounds: int = 0  # vectorised rounds (all pairs, then the leftovers with adaptive proposal counts)
    inverse_cdf: int = 0  # pairs not accepted within MAX_PROPOSALS_PER_EXAMPLE proposals: exact fallback sample

    @property
    def proposals_per_sample(self) -> float:
        return self.proposals / max(self.samples, 1)

    def add(self, other: "UPSStats") -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@torch.no_grad()
def proposal_width(likelihood, y, mu, sigma, max_n: int = MAX_N) -> torch.Tensor:
    """The multiplier n_i (1..max_n) of the proposal variance n sigma^2, per example."""
    ns = torch.arange(1, max_n + 1, dtype=mu.dtype, device=mu.device)
    ratio = torch.where(ns > 1, torch.log(ns) / (1 - 1 / ns), torch.ones_like(ns))  # n -> 1 limit is 1
    r = sigma.unsqueeze(0) * torch.sqrt(ratio).unsqueeze(-1)  # (n, N)
    a, b = mu - r, mu + r
    yy = y.expand_as(a)
    log_m1 = torch.maximum(log_lik_fn(likelihood)(yy, a), log_lik_fn(likelihood)(yy, b))
    log_max = likelihood.log_max(y).expand_as(a)
    mode = likelihood.mode(y).expand_as(a)
    log_m1 = torch.where((a <= mode) & (mode <= b), torch.maximum(log_m1, log_max), log_m1)
    ok = log_m1 <= log_max - 0.5 * torch.log(ns).unsqueeze(-1)
    ok[0] = True  # n = 1: h2 = q, always valid with K = l_max
    idx = torch.arange(1, max_n + 1, device=mu.device).unsqueeze(-1) * ok  # 0 where not ok
    return idx.max(0).values.to(mu.dtype)


# Vectorised rounds: a pair still without a sample gets ceil(ROUND_FACTOR * expected proposals) proposals
# in the next round (so about exp(-ROUND_FACTOR) of the pairs are left after it), at most MAX_ROUND_ELEMENTS
# proposals per round in all.
ROUND_FACTOR = 2.0
MAX_ROUND_ELEMENTS = 1 << 21
SMALL_ROUND = 8192


def _fallback_samples(likelihood, y, mu, var):
    """One exact sample per entry from q~(f) ∝ N(f|mu,var) p(y|f) (1-D tensors of pairs; repeated examples
    share one grid): the inverse CDF of the tilted density on the adaptive grid (`quad.sample_tilted`)."""
    key = torch.stack([y, mu, var], -1)
    uniq, inverse = torch.unique(key, dim=0, return_inverse=True)
    counts = torch.bincount(inverse, minlength=uniq.shape[0])
    yu, mu_u, var_u = uniq.unbind(-1)
    features = likelihood.features(yu) if hasattr(likelihood, "features") else ()
    derivs = getattr(likelihood, "log_prob_f_derivs", None)
    draws = quad.sample_tilted(log_lik_fn(likelihood), yu, mu_u, var_u, int(counts.max()),
                               features, derivs)  # (max count, unique)
    order = torch.argsort(inverse, stable=True)
    start = torch.cumsum(counts, 0) - counts
    rank = torch.empty_like(inverse)
    rank[order] = torch.arange(inverse.numel(), device=inverse.device) - start[inverse[order]]
    return draws[rank, inverse].to(mu.dtype)


@torch.no_grad()
def ups_sample(likelihood, y, mu, var, num_samples: int, max_n: int = MAX_N, log_marginal=None,
               max_proposals: int = MAX_PROPOSALS_PER_EXAMPLE):
    """Exact samples from q~(f_i) ∝ N(f_i|mu_i, var_i) p(y_i|f_i): tensor (num_samples, N) and UPSStats.

    Each (sample, example) pair is its own rejection sampler: an i.i.d. sequence of proposals
    f = mu + sqrt(n) sigma eps from h2, of which the first accepted one is the sample. The sequences are
    drawn in vectorised rounds: round 1 gives every pair one proposal; each later round gives every pair
    still without a sample a block of k_i proposals (k_i from the expected count l_max / E_q[p(y_i|f)];
    `log_marginal` is log E_q[p(y_i|f)] if the caller has it, else it is computed here), and a pair takes
    the first accepted proposal of its block. How the sequences are cut into blocks does not change
    which proposal is the first accepted one, so the samples are exact whatever k_i is. A pair that has
    drawn `max_proposals` proposals without an acceptance (or is expected to need more than that) takes
    its sample from the exact fallback instead (`_fallback_samples`; counted in `UPSStats.inverse_cdf`):
    the rejection sampler conditioned on failing and the fallback both sample q~ exactly, so the mixture
    does too, and the work per example is bounded.
    """
    y, mu, var = y.detach(), mu.detach(), var.detach().clamp_min(1e-12)
    sigma = var.sqrt()
    n = proposal_width(likelihood, y, mu, sigma, max_n)
    log_max = likelihood.log_max(y).detach().expand_as(mu)
    shape = (num_samples,) + tuple(mu.shape)
    N = mu.numel()
    stats = UPSStats(samples=num_samples * N)
    # log accept = log p(y|mu + spread eps) + 0.5 log n - log l_max - 0.5 (n - 1) eps^2  (= log [q(f) p(y|f) / (l_max h2(f))] <= 0)
    spread = torch.sqrt(n) * sigma
    const = 0.5 * torch.log(n) - log_max
    half_nm1 = 0.5 * (n - 1)
    yf, muf, spf, cf, hf = (t.reshape(-1) for t in (y.expand_as(mu), mu, spread, const, half_nm1))

    def log_accept_segment(ex, eps):
        return log_lik_fn(likelihood)(yf[ex], muf[ex] + spf[ex] * eps) + cf[ex] - hf[ex] * eps * eps

    # round 1: one proposal for every pair (broadcast over the examples, no gathers)
    eps = torch.randn(shape, dtype=mu.dtype, device=mu.device)
    f = mu + spread * eps
    accept = torch.log(torch.rand_like(eps)) < log_lik_fn(likelihood)(y, f) + const - half_nm1 * eps * eps
    out = torch.where(accept, f, torch.full_like(f, float("nan"))).reshape(-1)
    accept = accept.reshape(-1)
    stats.proposals += int(accept.sum())
    stats.rounds = 1
    todo = torch.nonzero(~accept).flatten()  # flat pair indices l * N + i
    stats.fallback = int(todo.numel())
    if todo.numel() == 0:
        return out.reshape(shape), stats
    if log_marginal is None:
        log_marginal = _value(likelihood, y, mu, var)
    # expected proposals per sample, l_max / E_q[p(y|f)] >= 1 (a poor estimate only costs time)
    expected = torch.exp(log_max - log_marginal.detach().reshape(mu.shape)).reshape(-1)
    expected = torch.nan_to_num(expected, nan=1.0, posinf=float(MAX_PROPOSALS_PER_EXAMPLE)).clamp(1.0, 1e12)
    drawn = torch.ones(todo.numel(), dtype=torch.long, device=mu.device)  # proposals so far, per pair
    var_f = var.expand_as(mu).reshape(-1)
    while todo.numel():
        ex = todo % N
        e = expected[ex]
        # out of budget (or expected to be): the exact fallback, one sample per pair
        over = (drawn >= max_proposals) | (e > max_proposals)
        if bool(over.any()):
            idx = todo[over]
            exo = idx % N
            out[idx] = _fallback_samples(likelihood, yf[exo], muf[exo], var_f[exo])
            stats.inverse_cdf += int(idx.numel())
            stats.proposals += int(drawn[over].sum())
            todo, drawn, ex, e = todo[~over], drawn[~over], ex[~over], e[~over]
            if todo.numel() == 0:
                break
        # few pairs left: larger blocks, so that about one pair is expected to be left after the round
        # (a round costs a fixed ~20 tensor operations, worth a few thousand proposals)
        factor = ROUND_FACTOR
        if float(e.sum()) * math.log(todo.numel() + 1) < SMALL_ROUND:
            factor = max(ROUND_FACTOR, math.log(todo.numel() + 1))
        k = torch.minimum(torch.ceil(factor * e).long().clamp(2, MAX_ROUND_ELEMENTS), max_proposals - drawn).clamp_min(1)
        total = int(k.sum())
        if total > MAX_ROUND_ELEMENTS:  # share the round's budget (at least 1 proposal per pair)
            k = (k * (MAX_ROUND_ELEMENTS / total)).long().clamp_min(1)
            total = int(k.sum())
        seg = torch.repeat_interleave(torch.arange(todo.numel(), device=mu.device), k)
        start = torch.cumsum(k, 0) - k
        pos = torch.arange(total, device=mu.device) - start[seg]
        ex_seg = ex[seg]
        eps = torch.randn(total, dtype=mu.dtype, device=mu.device)
        acc = torch.log(torch.rand_like(eps)) < log_accept_segment(ex_seg, eps)
        first = torch.full((todo.numel(),), total, dtype=torch.long, device=mu.device)
        first.scatter_reduce_(0, seg[acc], pos[acc], reduce="amin")
        got = first < total
        at = start[got] + first[got]
        out[todo[got]] = muf[ex[got]] + spf[ex[got]] * eps[at]
        stats.proposals += int((drawn[got] + first[got] + 1).sum())
        drawn = drawn[~got] + k[~got]
        todo = todo[~got]
        stats.rounds += 1
    return out.reshape(shape), stats


def _value(likelihood, y, mu, var):
    """log E_q[p(y|f)] per point: the likelihood's closed form, else the adaptive quadrature."""
    if hasattr(likelihood, "predictive_log_marginal"):
        return likelihood.predictive_log_marginal(y, mu, var)
    return quadrature_log_marginal(likelihood, y, mu, var)


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
    """Per-point log E_q[p(y|f)] whose gradient w.r.t. (mu, var) is the uPS estimate and w.r.t. the
    likelihood's own parameters (e.g. a Student-t scale) the exact one (closed form or quadrature, with
    mu and var held fixed); also the sampler stats."""
    likelihood_grad = torch.is_grad_enabled() and any(p.requires_grad for p in likelihood.parameters())
    with torch.set_grad_enabled(likelihood_grad):
        v = _value(likelihood, y.detach(), mu.detach(), var.detach())
    value = v.detach()
    samples, stats = ups_sample(likelihood, y, mu, var, num_samples, max_n, log_marginal=value)
    out = UPSLogMarginal.apply(mu, var, value, samples)
    if likelihood_grad:
        out = out + (v - value)  # same value; d/d(likelihood parameters) of log E_q[p(y|f)]
    return out, stats


class UPSPredictiveLogLikelihood(_BMC):
    """Log-loss DLM with uPS gradients of the likelihood term; `stats` accumulates sampler statistics."""

    def __init__(self, likelihood, model, num_data, beta=1.0, num_samples: int = 10, combine_terms=True):
        super().__init__(likelihood, model, num_data, beta=beta, num_samples=num_samples, combine_terms=combine_terms)
        if not hasattr(likelihood, "log_max"):
            raise ValueError(f"uPS needs a likelihood with log_max/mode (not {type(likelihood).__name__})")
        self.stats = UPSStats()

    @property
    def fallbacks(self) -> int:
        """(sample, example) pairs whose sample came from the exact inverse-CDF fallback, cumulative since
        construction (over all training iterations): the number issue 26 asks run.json to record."""
        return self.stats.inverse_cdf

    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        value, stats = ups_log_marginal(self.likelihood, target, approximate_dist_f.mean,
                                        approximate_dist_f.variance, self.num_samples)
        self.stats.add(stats)
        return value.sum(-1)
