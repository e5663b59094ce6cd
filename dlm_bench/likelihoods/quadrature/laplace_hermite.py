"""Laplace-centred Gauss-Hermite for log E_q[p] of log-concave likelihoods (`log_marginal`'s `laplace_hermite`):
the rules of LAPLACE_NODES centred on the tilted mode with its Laplace width, each checked by the next (an
embedded error estimate); the points no pair agrees on are left to the panel rule.
"""

from __future__ import annotations

import torch

from .common import LOG_2PI, _min_width, _normal_log_pdf
from .hermite import _hermite
from .rule_sums import _RuleLogSumExp

# log_marginal's laplace_hermite rules: each checks the next, a point stops at the first pair that agrees. (12, 20)
# alone trusted 18-48 % of Poisson points at var 0.3-1 (the 12-node rule's error is 1e-9-2e-8 there while the 20-node
# one's is 1e-11), so most of a Poisson DLM step went to the panel rule; with 32 and 48 100 % at var <= 1 and 77 % at
# var <= 3 (2026-11-27, docs/performance.md). Points trusted by (12, 20) get the same value as before.
LAPLACE_NODES = (12, 20, 32, 48)
LAPLACE_TOL = 1e-9  # |20-node - 12-node| allowed in the value (nats) and, times (1 + |grad|), in the gradients


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
