"""The one place where Gaussian expectations of a likelihood are integrated (issue 26).

Every non-closed-form quantity of every likelihood goes through this module: the likelihoods of this package
(ELBO and DLM terms, predictive densities and moments), the LGM sites (fp/sites.py), the uPS value and its
exact fallback sampler (estimators/ups.py), the estimator classes (estimators/quadrature.py). The rule below,
`AdaptiveRule`, is the one that is accurate everywhere; two cheaper rules are used only where they are shown to
be as accurate: Gauss-Hermite tiers for E_q[log p] of smooth likelihoods at small var (`expected_log_prob`'s
`hermite_tiers`) and Laplace-centred Gauss-Hermite with an embedded error estimate for log E_q[p] of log-concave
likelihoods (`log_marginal`'s `laplace_hermite`). Both fall back to `AdaptiveRule` point by point.

The rule: composite Gauss-Legendre on panels whose breakpoints adapt to each point
-------------------------------------------------------------------------------------
For q(f) = N(mu, var) the integrand N(f|mu,var) g(f) (g = log p(y|f), p(y|f) or a moment) has at most three
length scales, and the panels resolve each of them where it lives:

* q itself: breakpoints mu + sd * {0, +-1.25, +-2.5, +-4, +-6, +-8.5, +-12} (the mass outside +-12 sd is 4e-33);
* the likelihood's features, given by the likelihood as (centre c, width w) pairs via `features(y)`
  (Student-t: (y, scale); probit and logistic: (0, 1); Poisson: (0, 1) and (log-rate = y, 1/sqrt(y))):
  c +- w * {0.5, 1, 2, 4, ...} (geometric: a panel never spans more than a factor 2 in distance from c,
  so power-law tails and kinks of width w are resolved at any var / w^2, from 1e-4 to 1e4 and beyond);
* for log E_q[p(y|f)] also the tilted density q(f) p(y|f): its mode c* (`tilted_mode`, a safeguarded
  Newton iteration, below) and Laplace width s*: c* +- s* * {0.75, 1.5, 3, 6, 12, 24, ...}.

The breakpoints of all families are merged, clipped to the integration range (mu +- 12 sd, widened to
c* +- 12 sd for the tilted density) and sorted; every panel between two consecutive breakpoints gets
`PANEL_NODES` Gauss-Legendre nodes. Merging keeps every panel inside one panel of each family, so the
integrand is smooth on the scale of every panel (analytic in a Bernstein ellipse of parameter >= ~5 for
the likelihoods here) and the error of 8 nodes per panel is at the level of float64 round-off. The number
of geometric levels is the smallest that reaches the integration range for the whole batch, so a batch
with var ~ w^2 costs ~40 panels per point and one with var = 1e4 w^2 ~70.

Sums of log p(y|f) are weighted sums; log E_q[p] is a logsumexp over the nodes (no underflow however far
the likelihood's peak sits in q's tail). The breakpoints are computed without gradient; the value is
differentiable through the weights N(f_k|mu,var) (and through log p(y|f_k) for the likelihood's own
parameters), so its gradient in (mu, var) is the same composite rule applied to the exact derivative of
the integrand, as accurate as the value. Inputs of any floating dtype are integrated in float64 and the
result is returned in the input dtype. var below 1e-12 w^2 (q a point mass on the scale of every feature)
uses the second-order expansion log p(y|mu) + var/2 d2/df2 (E_q[log p]) or + var/2 (g^2 + d2) (log E_q[p]),
whose error is O(var^2).

Tilted mode (Laplace centre). phi(f) = log p(y|f) - (f - mu)^2 / (2 var). Starting from mu, a bracket
[lo, hi] with phi'(lo) > 0 > phi'(hi) is found by doubling steps; then each iteration takes the Newton step
-phi'/phi'' only where phi'' < 0, the step stays inside the bracket, is at most half the step before the
last (rtsafe's rule: Newton crawling down an exponential tail, one unit per step, is replaced by bisection)
and phi does not decrease (an ascent step), else it bisects the bracket; the bracket shrinks around a sign change of phi' every iteration. So it
converges to a local maximum for any likelihood, log-concave or not (the non-log-concave Student-t's other
mode, at y, is covered by its feature panels).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np
import torch

LOG_2PI = math.log(2 * math.pi)

PANEL_NODES = 8  # Gauss-Legendre nodes per panel
RANGE_SD = 12.0  # integration range: mu +- RANGE_SD sd (and c* +- RANGE_SD sd for the tilted density)
Q_OFFSETS = (1.25, 2.5, 4.0, 6.0, 8.5, RANGE_SD)  # q's breakpoints mu +- sd * these (and mu)
POINT_MASS = 1e-12  # var / w^2 below which the second-order expansion is used
NEWTON_ITERS = 60
# var / width^2 below which expected_log_prob_and_derivatives takes dE/dmu, dE/dvar in Stein's form, E[d log p/df] and
# E[d^2 log p/df^2]/2, instead of the score form (the integrand times (f - mu)/var, ((f - mu)^2/var^2 - 1/var)/2), whose
# terms of size |log p| / var cancel: measured on the ordinal site (slope 50), the score form's lambda is within 7e-9
# relative at var / width^2 = 1e-4, 3e-6 at 1e-6 and off by 4x at 1e-10; Stein's within 2e-10 throughout.
STEIN_RATIO = 1e-2

LogLik = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (y, f) -> log p(y|f), broadcasting
Derivs = Callable[[torch.Tensor, torch.Tensor], tuple]  # (y, f) -> (d/df, d2/df2) of log p(y|f)
Features = Sequence[tuple[torch.Tensor, torch.Tensor]]  # [(centre, width), ...], each broadcastable to y


@lru_cache(maxsize=8)
def _legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


@lru_cache(maxsize=64)
def _offsets(kind: str, levels: int) -> np.ndarray:
    if kind == "q":
        half = np.array(Q_OFFSETS)
        return np.concatenate([-half[::-1], [0.0], half])
    first = 0.5 if kind == "feature" else 0.75
    half = first * 2.0 ** np.arange(levels)
    return np.concatenate([-half[::-1], [0.0], half])


def _levels(reach: torch.Tensor, first: float) -> int:
    """Geometric levels so that first * 2^(levels-1) >= reach (the batch's largest), between 2 and 60."""
    r = float(torch.nan_to_num(reach, nan=1.0, posinf=1e18).max()) if reach.numel() else 1.0
    return int(min(60, max(2, math.ceil(math.log2(max(r, first) / first)) + 1)))


def _feature_reach(centre, width, mu, sd, lo, hi):
    """A feature family's (c, w, ok, reach) per point: invalid features (infinite centre, zero width) become
    q's own (mu, sd); reach = how many widths the integration range [lo, hi] extends from c (1 when c is
    far outside it: only the part of the range the family can reach matters for its levels)."""
    c = torch.as_tensor(centre).detach().to(mu).expand_as(mu)
    w = torch.as_tensor(width).detach().to(mu).expand_as(mu)
    ok = torch.isfinite(c) & torch.isfinite(w) & (w > 0)
    c, w = torch.where(ok, c, mu), torch.where(ok, w, sd)
    reach = torch.maximum((hi - c).abs(), (c - lo).abs()) / w
    reach = torch.where((c > lo - 4096 * (hi - lo)) & (c < hi + 4096 * (hi - lo)), reach, 1.0)
    return c, w, ok, reach


def _point_levels(mu, var, features: Features) -> torch.Tensor:
    """The feature levels each point's own range needs (`_levels` per point, the largest over the families)."""
    with torch.no_grad():
        mu, var = _as64(mu.detach(), var.detach())
        sd = var.clamp_min(1e-300).sqrt()
        lo, hi = mu - RANGE_SD * sd, mu + RANGE_SD * sd
        out = torch.full(mu.shape, 2, dtype=torch.long, device=mu.device)
        for centre, width in features:
            reach = torch.nan_to_num(_feature_reach(centre, width, mu, sd, lo, hi)[3], nan=1.0, posinf=1e18)
            out = torch.maximum(out, (torch.log2(reach.clamp_min(0.5) / 0.5).ceil() + 1).clamp(2, 60).long())
        return out


def _as64(*ts):
    return tuple(t.to(torch.float64) if t.is_floating_point() else t.double() for t in ts)


def _normal_log_pdf(f, mean, var):
    return -0.5 * (LOG_2PI + torch.log(var) + (f - mean) ** 2 / var)


def autograd_derivs(log_lik: LogLik) -> Derivs:
    """(d/df, d2/df2) of log p(y|f) by autograd, for a likelihood without analytic derivatives."""

    def derivs(y, f):
        with torch.enable_grad():
            f = f.detach().clone().requires_grad_(True)
            (g,) = torch.autograd.grad(log_lik(y, f).sum(), f, create_graph=True)
            (h,) = torch.autograd.grad(g.sum(), f, allow_unused=True) if g.requires_grad else (None,)
        return g.detach(), (torch.zeros_like(g) if h is None else h.detach())

    return derivs


@torch.no_grad()
def tilted_mode(log_lik: LogLik, derivs: Derivs, y, mu, var, iters: int = NEWTON_ITERS):
    """(c*, s*^2): a local maximum of phi(f) = log p(y|f) + log N(f|mu,var) and -1/phi''(c*) (var where
    phi'' >= 0), by Newton steps that must ascend and stay in a shrinking bracket, else bisection."""
    y, mu, var = torch.broadcast_tensors(y.detach(), mu.detach(), var.detach())
    sd = var.sqrt()

    def dphi(f):
        g, h = derivs(y, f)
        return g - (f - mu) / var, h - 1.0 / var

    def phi(f):
        return log_lik(y, f) - 0.5 * (f - mu) ** 2 / var

    d0, _ = dphi(mu)
    d0 = torch.nan_to_num(d0)
    direction = torch.where(d0 >= 0, 1.0, -1.0).to(mu)
    # bracket: a = mu (phi' has the sign of direction there); double the step until phi' changes sign
    step = torch.maximum(sd, (var * d0.abs()).clamp_max(1e30))
    other = mu + direction * step
    for _ in range(200):
        d, _ = dphi(other)
        need = (d * direction > 0) & torch.isfinite(other)
        if not bool(need.any()):
            break
        step = torch.where(need, 2 * step, step)
        other = torch.where(need, mu + direction * step, other)
    lo = torch.where(direction > 0, mu, other)
    hi = torch.where(direction > 0, other, mu)
    f = mu.clone()
    f_phi = phi(f)
    done = d0 == 0
    dx_old = hi - lo  # rtsafe's rule: a Newton step must at least halve the step before the last one
    dx = dx_old.clone()
    for _ in range(iters):
        d, h = dphi(f)
        newton = f - d / h
        ok = (h < 0) & (newton > lo) & (newton < hi) & torch.isfinite(newton) & ((d / h).abs() <= 0.5 * dx_old.abs())
        # converged: the Newton step is below 1e-6 Laplace widths (the rule needs c* to ~0.1 s*). Not gated on
        # `ok`: at the maximum the step is below round-off and f - d/h can equal a bracket end, which `ok` rejects
        # (the bisection that followed then crawled back, up to 30 extra iterations for the whole batch)
        done = done | ((h < 0) & ((d / h).abs() <= 1e-6 * (-1.0 / h).sqrt())) | ((hi - lo) <= 1e-9 * sd)
        if bool(done.all()):
            break
        cand = torch.where(ok, newton, 0.5 * (lo + hi))
        c_phi = phi(cand)
        ascent = ok & (c_phi >= f_phi)
        fail = ok & ~ascent  # the Newton step does not ascend: bisect the bracket instead
        cand = torch.where(fail, 0.5 * (lo + hi), cand)
        if bool(fail.any()):
            c_phi = torch.where(fail, phi(cand), c_phi)
        cd, _ = dphi(cand)
        # shrink the bracket around the sign change of phi'
        lo = torch.where(~done & (cd > 0), cand, lo)
        hi = torch.where(~done & (cd <= 0), cand, hi)
        dx_old, dx = torch.where(done, dx_old, dx), torch.where(done, dx, cand - f)
        f = torch.where(done, f, cand)
        f_phi = torch.where(done, f_phi, c_phi)
    _, h = dphi(f)
    s2 = torch.where(h < 0, -1.0 / h, var).clamp_max(var)
    s2 = torch.where(torch.isfinite(s2) & (s2 > 0), s2, var)
    return f, s2


class AdaptiveRule:
    """Nodes f (..., K) and log-weights (..., K), without gradient, of the composite rule for one batch of
    q(f) = N(mu, var) (shapes broadcast), plus what the integrands need. See the module docstring."""

    def __init__(self, y, mu, var, features: Features = (), tilted: tuple | None = None):
        with torch.no_grad():
            y, mu, var = torch.broadcast_tensors(*_as64(y.detach(), mu.detach(), var.detach()))
            var = var.clamp_min(1e-300)
            sd = var.sqrt()
            lo, hi = mu - RANGE_SD * sd, mu + RANGE_SD * sd
            parts = [mu.unsqueeze(-1) + sd.unsqueeze(-1) * torch.as_tensor(_offsets("q", 0)).to(mu)]
            min_w = torch.full_like(mu, math.inf)
            if tilted is not None:
                c, s2 = (t.detach().to(mu).expand_as(mu) for t in tilted)
                s = s2.clamp_min(0).sqrt()
                c = torch.where(torch.isfinite(c), c, mu)
                lo, hi = torch.minimum(lo, c - RANGE_SD * sd), torch.maximum(hi, c + RANGE_SD * sd)
                levels = _levels((hi - lo) / s.clamp_min(1e-300), 0.75)
                parts.append(c.unsqueeze(-1) + s.unsqueeze(-1) * torch.as_tensor(_offsets("tilted", levels)).to(mu))
            for centre, width in features:
                c, w, ok, reach = _feature_reach(centre, width, mu, sd, lo, hi)
                min_w = torch.minimum(min_w, torch.where(ok, w, min_w))
                levels = _levels(reach, 0.5)
                parts.append(c.unsqueeze(-1) + w.unsqueeze(-1) * torch.as_tensor(_offsets("feature", levels)).to(mu))
            bps = torch.cat(parts, -1)
            bps = torch.maximum(torch.minimum(bps, hi.unsqueeze(-1)), lo.unsqueeze(-1))
            bps = torch.cat([lo.unsqueeze(-1), bps, hi.unsqueeze(-1)], -1).sort(-1).values
            x, w = (torch.as_tensor(a).to(mu) for a in _legendre(PANEL_NODES))
            a, b = bps[..., :-1], bps[..., 1:]
            half = (0.5 * (b - a)).unsqueeze(-1)
            f = (0.5 * (a + b)).unsqueeze(-1) + half * x
            self.f = f.flatten(-2)
            self.log_w = (torch.log(half) + torch.log(w)).flatten(-2)  # -inf on zero-width panels
            self.y, self.mu, self.var = y, mu, var
            self.width2 = torch.where(torch.isfinite(min_w), min_w, 1.0) ** 2  # the narrowest feature's width^2
            self.point_mass = var < POINT_MASS * self.width2

    def log_q(self, mu, var):
        """log N(f_k | mu, var) at the nodes, differentiable in (mu, var) (float64)."""
        mu, var = _as64(mu, var)
        var = var.clamp_min(1e-300)
        return _normal_log_pdf(self.f, mu.unsqueeze(-1), var.unsqueeze(-1))


class _RuleLogSumExp(torch.autograd.Function):
    """log sum_k exp(log_w_k + log N(f_k|mu,var) + log_p_k) per point, with the analytic backward
    d/dmu = sum_k s_k (f_k - mu)/var, d/dvar = sum_k s_k ((f_k - mu)^2/var^2 - 1/var)/2, d/dlog_p_k = s_k
    (s the softmax of the summands): no autograd graph over the nodes except what log_p itself carries."""

    @staticmethod
    def forward(ctx, mu, var, log_p, f, log_w):
        z = f - mu.unsqueeze(-1)
        a = z * z
        a.mul_((-0.5 / var).unsqueeze(-1)).add_(log_w).add_(log_p).add_((-0.5 * (LOG_2PI + torch.log(var))).unsqueeze(-1))
        out = torch.logsumexp(a, -1)
        soft = a.sub_(out.unsqueeze(-1)).exp_()  # 0 on zero-width panels (log_w = -inf)
        ctx.save_for_backward(soft, z, var)
        return out

    @staticmethod
    def backward(ctx, g):
        soft, z, var = ctx.saved_tensors
        sz = soft * z
        d_mu = sz.sum(-1) / var
        d_var = 0.5 * ((sz * z).sum(-1) / (var * var) - soft.sum(-1) / var)
        d_logp = soft * g.unsqueeze(-1) if ctx.needs_input_grad[2] else None
        return g * d_mu, g * d_var, d_logp, None, None


class _RuleSum(torch.autograd.Function):
    """sum_k exp(log_w_k + log N(f_k|mu,var)) log_p_k per point, analytic backward (as _RuleLogSumExp)."""

    @staticmethod
    def forward(ctx, mu, var, log_p, f, log_w):
        z = f - mu.unsqueeze(-1)
        v = var.unsqueeze(-1)
        pw = torch.exp(log_w - 0.5 * (LOG_2PI + torch.log(v) + z * z / v))
        lp = torch.where(pw > 0, pw * log_p, torch.zeros_like(log_p))
        ctx.save_for_backward(pw, lp, z, var)
        return lp.sum(-1)

    @staticmethod
    def backward(ctx, g):
        pw, lp, z, var = ctx.saved_tensors
        d_mu = (lp * z).sum(-1) / var
        d_var = 0.5 * ((lp * z * z).sum(-1) / (var * var) - lp.sum(-1) / var)
        d_logp = pw * g.unsqueeze(-1) if ctx.needs_input_grad[2] else None
        return g * d_mu, g * d_var, d_logp, None, None


@lru_cache(maxsize=16)
def _hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes x_k and weights w_k / sqrt(pi) for E_N(f|mu,var)[g] = sum_k w_k g(mu + sqrt(2 var) x_k)."""
    x, w = np.polynomial.hermite.hermgauss(n)
    return x, w / math.sqrt(math.pi)


class _HermiteSum(torch.autograd.Function):
    """sum_k w_k log_p_k per point (log_p: (P, K) at f_k = mu + sqrt(2 var) x_k), with the analytic backward of
    the score form: d/dmu = sum_k w_k log_p_k x_k sqrt(2/var), d/dvar = sum_k w_k log_p_k (x_k^2 - 1/2)/var
    (E[g (f-mu)/var] and E[g ((f-mu)^2/var^2 - 1/var)/2] by the same rule), so the nodes carry no graph and
    the whole rule is three matrix-vector products."""

    @staticmethod
    def forward(ctx, mu, var, log_p, x, w):
        ctx.save_for_backward(log_p, x, w, var)
        return log_p @ w

    @staticmethod
    def backward(ctx, g):
        log_p, x, w, var = ctx.saved_tensors
        d_mu = (log_p @ (w * x)) * torch.sqrt(2 / var)
        d_var = (log_p @ (w * (x * x - 0.5))) / var
        d_logp = g.unsqueeze(-1) * w if ctx.needs_input_grad[2] else None
        return g * d_mu, g * d_var, d_logp, None, None


def _hermite_group(log_lik, y, mu, var, n: int):
    """E_q[log p] of a flat group of points by the n-node Gauss-Hermite rule."""
    x, w = (torch.as_tensor(a).to(mu) for a in _hermite(n))
    with torch.no_grad():
        f = mu.detach().unsqueeze(-1) + torch.sqrt(2 * var.detach()).unsqueeze(-1) * x
    return _HermiteSum.apply(mu, var, log_lik(y.unsqueeze(-1), f), x, w)


def _prepare(y, mu, var):
    out_dtype = torch.promote_types(mu.dtype, var.dtype)
    y, mu, var = torch.broadcast_tensors(y, mu, var)
    return y, mu, var, out_dtype


def expected_log_prob(log_lik: LogLik, y, mu, var, features: Features = (), derivs: Derivs | None = None,
                      peak: tuple | None = None, hermite_tiers: Sequence[tuple[int, float]] = ()):
    """E_N(f|mu,var)[log p(y|f)] per point. `peak` = (c, s^2): where N(f|mu,var) |log p(y|f)| peaks if not
    near mu (log p growing like e^f: c = mu + var), panelled like the tilted density of log_marginal.

    `hermite_tiers` ((nodes, max var / width^2), ascending; width = the smallest feature width, 1 without
    features): for a log-likelihood analytic in a strip around the real axis (probit, logistic) plain Gauss-Hermite
    converges geometrically while var / width^2 is small, at a tenth of the adaptive rule's nodes. Points within
    the last tier's limit use the fewest nodes that cover the batch's largest ratio there; the rest, and every
    point when `peak` is given, use the adaptive rule. The limits are where the rule's error, values and
    gradients, stays below 1e-8 against a dense grid (likelihoods/probit.py); the contract test checks it."""
    if hermite_tiers and peak is None:
        return _expected_log_prob_hermite(log_lik, y, mu, var, features, derivs, hermite_tiers)
    return _expected_log_prob_adaptive(log_lik, y, mu, var, features, derivs, peak)


def _expected_log_prob_hermite(log_lik, y, mu, var, features, derivs, tiers):
    """Each point in the group of the fewest nodes that cover its var / width^2 (so one wide point does not make
    the whole batch pay for 64 nodes); points past the last tier (and point masses) take the adaptive rule."""
    y, mu, var, dtype = _prepare(y, mu, var)
    shape = mu.shape
    y64, mu64, var64 = (t.reshape(-1) for t in _as64(y, mu, var))
    with torch.no_grad():
        ratio = var64.detach() / _min_width(features, var.detach().to(torch.float64)).reshape(-1) ** 2
        limits = torch.tensor([limit for _, limit in tiers], dtype=torch.float64, device=ratio.device)
        group = torch.searchsorted(limits, ratio)  # tier index; len(tiers): the adaptive rule
        group = torch.where((ratio >= POINT_MASS) & torch.isfinite(mu64.detach()) & torch.isfinite(ratio),
                            group, len(tiers))
        present = torch.unique(group).tolist()
    if present == [len(tiers)]:
        return _expected_log_prob_adaptive(log_lik, y, mu, var, features, derivs, None)
    if len(present) == 1:
        return _hermite_group(log_lik, y64, mu64, var64, tiers[present[0]][0]).reshape(shape).to(dtype)
    out = torch.zeros(mu64.shape, dtype=torch.float64, device=mu64.device)
    for k in present:
        idx = (group == k).nonzero().squeeze(-1)
        if k < len(tiers):
            val = _hermite_group(log_lik, y64[idx], mu64[idx], var64[idx], tiers[k][0])
        else:
            pick = _picker(shape, idx)
            val = _expected_log_prob_adaptive(log_lik, y64[idx], mu64[idx], var64[idx],
                                              [(pick(c), pick(w)) for c, w in features], derivs, None)
        out = out.index_put((idx,), val)
    return out.reshape(shape).to(dtype)


def _expected_log_prob_adaptive(log_lik, y, mu, var, features, derivs, peak):
    y, mu, var, dtype = _prepare(y, mu, var)
    rule = AdaptiveRule(y, mu, var, features, tilted=peak)
    mu64, var64 = _as64(mu, var)
    log_p = log_lik(rule.y.unsqueeze(-1), rule.f)
    value = _RuleSum.apply(mu64, var64.clamp_min(1e-300), log_p, rule.f, rule.log_w)
    if bool(rule.point_mass.any()):
        d = derivs or autograd_derivs(log_lik)
        _, h = d(rule.y, mu64.detach())
        approx = log_lik(rule.y, mu64) + 0.5 * var64 * h
        value = torch.where(rule.point_mass, approx, value)
    return value.to(dtype)


def log_marginal(log_lik: LogLik, y, mu, var, features: Features = (), derivs: Derivs | None = None,
                 centre: bool = True, laplace_hermite: bool = False):
    """log E_N(f|mu,var)[p(y|f)] per point (logsumexp over the nodes). centre=False leaves out the tilted
    mode's panels: for a bounded likelihood with polynomial tails (Student-t) the tilted density's mass lies
    on q's panels and the likelihood's feature panels already.

    laplace_hermite (log-concave likelihoods: the tilted density is unimodal): first Gauss-Hermite centred on
    the tilted mode c* with its Laplace width s*, in the rules of LAPLACE_NODES; where two successive rules agree
    to LAPLACE_TOL in the value and in both gradients (an embedded error estimate, as Gauss-Kronrod's) the finer
    value is the answer, the points left after the last pair take the panel rule. 32-112 likelihood evaluations
    per point instead of ~380."""
    y, mu, var, dtype = _prepare(y, mu, var)
    y64, mu64, var64 = _as64(y, mu, var)
    d = derivs or autograd_derivs(log_lik)
    tilted = tilted_mode(log_lik, d, y64, mu64, var64.clamp_min(1e-300)) if centre else None
    if laplace_hermite and tilted is not None:
        fast, ok = _laplace_hermite(log_lik, y64, mu64, var64, features, tilted)
        if bool(ok.all()):
            return fast.to(dtype)
        if bool(ok.any()):
            bad = (~ok).reshape(-1).nonzero().squeeze(-1)
            pick = _picker(mu64.shape, bad)
            slow = _log_marginal_panels(log_lik, pick(y64), pick(mu64), pick(var64),
                                        [(pick(c), pick(w)) for c, w in features], d,
                                        tuple(pick(t) for t in tilted))
            return fast.reshape(-1).index_put((bad,), slow).reshape(mu64.shape).to(dtype)
    return _log_marginal_panels(log_lik, y64, mu64, var64, features, d, tilted).to(dtype)


# log_marginal's laplace_hermite rules: each checks the next, a point stops at the first pair that agrees. (12, 20)
# alone trusted 18-48 % of Poisson points at var 0.3-1 (the 12-node rule's error is 1e-9-2e-8 there while the 20-node
# one's is 1e-11), so most of a Poisson DLM step went to the panel rule; with 32 and 48 100 % at var <= 1 and 77 % at
# var <= 3 (2026-11-27, docs/performance.md). Points trusted by (12, 20) get the same value as before.
LAPLACE_NODES = (12, 20, 32, 48)
LAPLACE_TOL = 1e-9  # |20-node - 12-node| allowed in the value (nats) and, times (1 + |grad|), in the gradients


def _picker(shape, idx):
    """t -> t broadcast to `shape`, flattened, at the flat indices idx."""
    return lambda t: torch.as_tensor(t).to(torch.float64).expand(shape).reshape(-1)[idx]


def _min_width(features: Features, like: torch.Tensor) -> torch.Tensor:
    """The smallest feature width per point (1 without features), shaped like `like`."""
    width = torch.ones_like(like)
    for _, w in features:
        width = torch.minimum(width, torch.as_tensor(w).detach().to(like).expand(like.shape))
    return width


def _laplace_nodes(c, s2, n: int):
    """Gauss-Hermite for N(f|c, s2): nodes c + sqrt(2 s2) x_k, log-weights log(w_k / sqrt(pi)) - log N(f_k|c, s2)
    (so that sum_k exp(log_w_k + log h(f_k)) integrates h)."""
    x, w = (torch.as_tensor(a).to(c) for a in _hermite(n))
    f = c.unsqueeze(-1) + torch.sqrt(2 * s2).unsqueeze(-1) * x
    return f, torch.log(w) + 0.5 * (LOG_2PI + torch.log(s2)).unsqueeze(-1) + x * x


@torch.no_grad()
def _tilted_summary(mu, var, log_p, f, log_w):
    """(log E_q[p], d/dmu, d/dvar) of one rule, as _RuleLogSumExp computes them."""
    z = f - mu.unsqueeze(-1)
    a = log_w + _normal_log_pdf(f, mu.unsqueeze(-1), var.unsqueeze(-1)) + log_p
    value = torch.logsumexp(a, -1)
    soft = torch.exp(a - value.unsqueeze(-1))
    return value, (soft * z).sum(-1) / var, 0.5 * ((soft * z * z).sum(-1) / (var * var) - 1 / var)


def _laplace_hermite(log_lik, y, mu, var, features, tilted):
    """(value, ok): the Laplace-centred Gauss-Hermite log E_q[p] (differentiable) and where it is trusted (value is
    0 elsewhere). The rules of LAPLACE_NODES in turn, each point only until a pair agrees: the finer rule of a pair
    that disagrees is the check of the next, so a point costs the evaluations of the rules it reaches."""
    shape = mu.shape
    with torch.no_grad():
        c, s2 = (t.detach().to(mu).expand_as(mu).reshape(-1) for t in tilted)
        s2 = s2.clamp_min(1e-300)
        valid = ((var.detach() >= 1e-8 * _min_width(features, var) ** 2).reshape(-1) & torch.isfinite(c))
    y, mu, var = (t.reshape(-1) for t in (y, mu, var))
    idx = torch.arange(mu.numel(), device=mu.device)
    with torch.no_grad():
        f, w = _laplace_nodes(c, s2, LAPLACE_NODES[0])
        check = _tilted_summary(mu.detach(), var.detach(), log_lik(y.unsqueeze(-1), f), f, w)
    value = torch.zeros_like(mu, dtype=torch.float64)
    ok = torch.zeros(mu.shape, dtype=torch.bool, device=mu.device)
    for nodes in LAPLACE_NODES[1:]:
        if idx.numel() == 0:
            break
        yi, mi, vi = y[idx], mu[idx], var[idx]
        f, w = _laplace_nodes(c[idx], s2[idx], nodes)
        log_p = log_lik(yi.unsqueeze(-1), f)
        with torch.no_grad():
            fine = _tilted_summary(mi.detach(), vi.detach(), log_p.detach(), f, w)
            good = valid[idx].clone()
            for k, (a, b) in enumerate(zip(check, fine)):
                scale = 1.0 if k == 0 else 1.0 + b.abs()
                good &= torch.isfinite(b) & ((a - b).abs() <= LAPLACE_TOL * scale)
        if bool(good.any()):
            g = good.nonzero().squeeze(-1)
            answer = _RuleLogSumExp.apply(mi[g], vi[g].clamp_min(1e-300), log_p[g], f[g], w[g])
            value = value.index_put((idx[g],), answer)
            ok[idx[g]] = True
        idx, check = idx[~good], tuple(t[~good] for t in fine)
    return value.reshape(shape), ok.reshape(shape)


def _log_marginal_panels(log_lik, y64, mu64, var64, features, d, tilted):
    rule = AdaptiveRule(y64, mu64, var64, features, tilted=tilted)
    log_p = log_lik(rule.y.unsqueeze(-1), rule.f)
    value = _RuleLogSumExp.apply(mu64, var64.clamp_min(1e-300), log_p, rule.f, rule.log_w)
    if bool(rule.point_mass.any()):
        g, h = d(rule.y, mu64.detach())
        approx = log_lik(rule.y, mu64) + 0.5 * var64 * (g * g + h)
        value = torch.where(rule.point_mass, approx, value)
    return value


def expectation(fn: Callable[[torch.Tensor], torch.Tensor], mu, var, features: Features = ()):
    """E_N(f|mu,var)[fn(f)] per point, e.g. a predictive moment."""
    _, mu, var, dtype = _prepare(torch.zeros(()), mu, var)
    rule = AdaptiveRule(torch.zeros_like(mu), mu, var, features)
    pw = torch.exp(rule.log_w + rule.log_q(mu, var))
    vals = fn(rule.f)
    value = torch.where(pw > 0, pw * vals, torch.zeros_like(vals)).sum(-1)
    if bool(rule.point_mass.any()):
        value = torch.where(rule.point_mass, fn(_as64(mu)[0]), value)
    return value.to(dtype)


def expected_log_prob_and_derivatives(log_lik: LogLik, y, mu, var, features: Features = (),
                                      derivs: Derivs | None = None):
    """(E, dE/dmu, dE/dvar) of E = E_N(f|mu,var)[log p(y|f)]: the rule applied to the exact derivatives of
    the integrand, N (f - mu)/var and N ((f - mu)^2/var^2 - 1/var)/2 (the LGM sites); below var / width^2 =
    STEIN_RATIO, to Stein's form E[d log p/df], E[d^2 log p/df^2]/2 instead. E stays differentiable (autograd gives
    the score form's derivatives); dE/dmu and dE/dvar are returned without gradient.

    Points are integrated in groups by feature levels (`_point_levels`, `_level_groups`): a batch's levels are set
    by its widest point, and a few points with a large var / width^2 would otherwise give every point panels that
    clip to zero width (measured on an ordinal batch shaped like the SGGPM stock runs', 856 points, slope 50,
    var / width^2 from 30 to 4e4: 576 nodes a point, a median of 368 with non-zero weight). A group costs a fixed
    overhead too, so small batches stay whole. Each point's panels with non-zero width are the same either way,
    so the result is too, to rounding."""
    y, mu, var, dtype = _prepare(y, mu, var)
    if features and y.dim() == 1 and y.numel() >= 512:  # below, the grouping costs more than it saves (measured)
        groups = _level_groups(_point_levels(mu, var, features), len(features))
        if len(groups) > 1:
            pick = _picker(mu.shape, slice(None))
            feats = [(pick(c), pick(w)) for c, w in features]
            out = [torch.empty(mu.shape, dtype=dtype, device=mu.device) for _ in range(3)]
            for idx in groups:
                part = _expected_log_prob_and_derivatives(log_lik, y[idx], mu[idx], var[idx],
                                                          [(c[idx], w[idx]) for c, w in feats], derivs)
                out = [o.index_put((idx,), p) for o, p in zip(out, part)]
            return tuple(out)
    return _expected_log_prob_and_derivatives(log_lik, y, mu, var, features, derivs)


# The fixed cost of one more group, in node evaluations: ~0.7 ms a call against ~0.045 us a node (one thread,
# the ordinal site; measured 2026-11-25, docs/performance.md "Ordinal site expectations")
GROUP_OVERHEAD_NODES = 20000


def _level_groups(levels: torch.Tensor, num_features: int) -> list[torch.Tensor]:
    """Index sets that partition the points by contiguous ranges of their levels, chosen to minimise the nodes
    evaluated plus GROUP_OVERHEAD_NODES a group (a dynamic programme over the distinct levels, at most 60)."""
    vals, counts = torch.unique(levels, return_counts=True)
    vals, counts = vals.tolist(), counts.tolist()
    k = len(vals)

    def nodes(level):  # per point: q's panels plus each feature family's 2 * level + 1 breakpoints
        return PANEL_NODES * (2 * len(Q_OFFSETS) + 2 + num_features * (2 * level + 1))

    best, cut = [0.0] + [math.inf] * k, [0] * (k + 1)
    for j in range(1, k + 1):
        for i in range(j):
            cost = best[i] + sum(counts[i:j]) * nodes(vals[j - 1]) + GROUP_OVERHEAD_NODES
            if cost < best[j]:
                best[j], cut[j] = cost, i
    bounds, j = [], k
    while j > 0:
        bounds.append((vals[cut[j]], vals[j - 1]))
        j = cut[j]
    return [((levels >= lo) & (levels <= hi)).nonzero().squeeze(-1) for lo, hi in reversed(bounds)]


def _weighted_sum(w, vals):
    return torch.where(w > 0, w * vals, torch.zeros_like(vals)).sum(-1)


def _expected_log_prob_and_derivatives(log_lik, y, mu, var, features, derivs):
    y, mu, var, dtype = _prepare(y, mu, var)
    rule = AdaptiveRule(y, mu, var, features)
    mu64, var64 = _as64(mu, var)
    pw = torch.exp(rule.log_w + rule.log_q(mu, var))
    log_p = log_lik(rule.y.unsqueeze(-1), rule.f)
    lp = torch.where(pw > 0, pw * log_p, torch.zeros_like(log_p))
    E = lp.sum(-1)
    with torch.no_grad():
        m, v = rule.mu.unsqueeze(-1), rule.var.unsqueeze(-1)
        lpd = lp.detach()
        z = rule.f - m
        dm = (lpd * z / v).sum(-1)
        dv = (lpd * 0.5 * (z * z / (v * v) - 1 / v)).sum(-1)
    narrow = (rule.var < STEIN_RATIO * rule.width2) & ~rule.point_mass
    if bool(narrow.any()):  # Stein's form E[g'], E[g'']/2: no cancellation (see STEIN_RATIO)
        d = derivs or autograd_derivs(log_lik)
        idx = narrow.nonzero(as_tuple=True)
        with torch.no_grad():
            g, h = d(rule.y[idx].unsqueeze(-1), rule.f[idx])
            w = pw.detach()[idx]
            dm, dv = dm.index_put(idx, _weighted_sum(w, g)), dv.index_put(idx, 0.5 * _weighted_sum(w, h))
    if bool(rule.point_mass.any()):
        d = derivs or autograd_derivs(log_lik)
        g, h = d(rule.y, rule.mu)
        E = torch.where(rule.point_mass, log_lik(rule.y, mu64) + 0.5 * var64 * h, E)
        dm = torch.where(rule.point_mass, g, dm)
        dv = torch.where(rule.point_mass, 0.5 * h, dv)
    return E.to(dtype), dm.to(dtype), dv.to(dtype)


@torch.no_grad()
def sample_tilted(log_lik: LogLik, y, mu, var, num: int, features: Features = (), derivs: Derivs | None = None,
                  cells: int = 64, generator=None):
    """Exact-to-the-grid samples from q~(f) ∝ N(f|mu,var) p(y|f): inverse CDF of the piecewise log-linear
    interpolant of the tilted density on the rule's panels, each cut into `cells` equal cells. y, mu, var: (N,);
    returns (num, N). The interpolant's relative error is O((h/l)^2) for cells of width h on a density with
    length scale l (h <= 1.5 sd / 64 and w / 128 here), far below what a KS test at 1e5 samples can see."""
    y, mu, var = torch.broadcast_tensors(*_as64(y, mu, var))
    d = derivs or autograd_derivs(log_lik)
    centre = tilted_mode(log_lik, d, y, mu, var.clamp_min(1e-300))
    rule = AdaptiveRule(y, mu, var, features, tilted=centre)
    P = PANEL_NODES
    # panel edges from the nodes: recover a, b of every panel (the rule's breakpoints)
    x = torch.as_tensor(_legendre(P)[0]).to(mu)
    f = rule.f.unflatten(-1, (-1, P))
    half = (f[..., -1] - f[..., 0]) / (x[-1] - x[0])
    mid = f[..., 0] - half * x[0]
    a, b = mid - half, mid + half
    t = torch.linspace(0, 1, cells + 1, dtype=mu.dtype)
    edges = (a.unsqueeze(-1) + (b - a).unsqueeze(-1) * t).flatten(-2)  # (N, panels * (cells + 1))
    e0 = edges.unflatten(-1, (-1, cells + 1))[..., :-1].flatten(-2)
    e1 = edges.unflatten(-1, (-1, cells + 1))[..., 1:].flatten(-2)
    l0 = log_lik(y.unsqueeze(-1), e0) + _normal_log_pdf(e0, mu.unsqueeze(-1), var.unsqueeze(-1))
    l1 = log_lik(y.unsqueeze(-1), e1) + _normal_log_pdf(e1, mu.unsqueeze(-1), var.unsqueeze(-1))
    h = e1 - e0
    D = (l1 - l0).abs()
    top = torch.maximum(l0, l1)
    # log of the cell's mass: log h + top + log((1 - exp(-D)) / D)
    shape_term = torch.where(D > 1e-12, torch.log(-torch.expm1(-D)) - torch.log(D.clamp_min(1e-300)), -0.5 * D)
    log_mass = torch.where(h > 0, torch.log(h.clamp_min(1e-300)) + top + shape_term,
                           torch.full_like(h, -math.inf))
    log_mass = torch.nan_to_num(log_mass, nan=-math.inf)
    probs = torch.exp(log_mass - log_mass.max(-1, keepdim=True).values)
    cdf = probs.cumsum(-1)
    cdf = cdf / cdf[..., -1:]
    u = torch.rand((y.shape[0], num), dtype=mu.dtype, generator=generator)
    k = torch.searchsorted(cdf, u).clamp_max(cdf.shape[-1] - 1)
    v = torch.rand((y.shape[0], num), dtype=mu.dtype, generator=generator)
    hk, Dk = h.gather(-1, k), D.gather(-1, k)
    # distance from the cell's higher end, density ∝ exp(-D x / h): x = -h log1p(v expm1(-D)) / D
    xk = torch.where(Dk > 1e-12, -hk * torch.log1p(v * torch.expm1(-Dk)) / Dk.clamp_min(1e-300), v * hk)
    decreasing = l0.gather(-1, k) >= l1.gather(-1, k)
    out = torch.where(decreasing, e0.gather(-1, k) + xk, e1.gather(-1, k) - xk)
    return out.T
