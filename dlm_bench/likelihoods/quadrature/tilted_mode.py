"""The tilted density's mode (the Laplace centre of log E_q[p]'s panels and of the Laplace-Hermite rules).

phi(f) = log p(y|f) - (f - mu)^2 / (2 var). Starting from mu, a bracket [lo, hi] with phi'(lo) > 0 > phi'(hi) is
found by doubling steps; then each iteration takes the Newton step -phi'/phi'' only where phi'' < 0, the step stays
inside the bracket, is at most half the step before the last (rtsafe's rule: Newton crawling down an exponential
tail, one unit per step, is replaced by bisection) and phi does not decrease (an ascent step), else it bisects the
bracket; the bracket shrinks around a sign change of phi' every iteration. So it converges to a local maximum for
any likelihood, log-concave or not (the non-log-concave Student-t's other mode, at y, is covered by its feature
panels).
"""

from __future__ import annotations

import torch

from .common import Derivs, LogLik

NEWTON_ITERS = 60


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
