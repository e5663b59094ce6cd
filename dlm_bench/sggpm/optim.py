"""Optimisers of the sparse / SoD GGPM (Sheth, Wang & Khardon 2015, sec. 3; upstream gen_gp_train.m).

Cyclic block driver (`train`): blocks run in turn, each to its own convergence, at most `max_outer` (100) outer
iterations; stop when the largest first-order optimality of the blocks' last runs is <= 1e-5, or when an outer
iteration changed f = -VLB by <= 1e-9 or no block took a step (upstream's `making_progress`).
  fp    [m: Newton to convergence;  V: FP, V <- T(V) = (K_M^-1 + sum_i gamma_i d_i d_i^T)^-1 (eq. 13), at most 500
         steps, stop at max|dVLB/dV| <= 1e-5 or |df| <= 1e-9 (fp_opt.m)]
  grad  [m: Newton;  L: L-BFGS on the lower Cholesky factor of V, gradient of sec. 3 (i), minFunc's defaults:
         500 iterations, optTol 1e-5, progTol 1e-9]
Departure: upstream stops on the largest optimality each block reported when it finished; the m-block's is then
stale (V has moved since), and on ucsdpeds1l that stops after one sweep 0.016 above the stored optimum. Here the
m-part is the gradient at the end of the sweep, i.e. the joint first-order optimality.
Newton on m: direction (K_M^-1 + D^T Gamma D)^-1 dF/dm with Armijo backtracking (gpmath.lgm.newton_step), until
||dF/dm||_inf <= 1e-5 or the gain <= 1e-9 (minFunc 'newton' defaults).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
import torch

from ..config.stopping import F_TOL, GRAD_TOL, MAX_ITERS
from ..gpmath.lgm import Cov, newton_step


@dataclass
class Fit:
    m: torch.Tensor
    cov: Cov
    objective: float  # the minimised objective: -VLB (primal), the dual D(lambda) (dual), -log q(y) (Laplace)
    vlb: float  # VLB at (m, V) (Laplace: at its Gaussian)
    outer: int
    converged: bool
    reason: str
    cpu_s: float = 0.0
    trace: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def newton_m(model, m, cov, tol=GRAD_TOL, prog=F_TOL, max_iters=MAX_ITERS):
    """m to convergence at fixed V. Returns (m, iterations, ||dF/dm||_inf)."""
    vq = model.marginals(m, cov)[1]
    k, gain = 0, np.inf
    while True:
        s = model.site_expectations(model.a + model.Dm(m), vq)
        g_inf = float((model.Dt(s.rho) - model.Sigma_solve(m - model.mu)).abs().max())
        if g_inf <= tol or k >= max_iters or abs(gain) <= prog:  # the gain of the last step
            return m, k, g_inf
        m, gain = newton_step(model, m, cov, vq)
        k += 1


def dvlb_dV_inf(model, m, cov) -> float:
    """max|dVLB/dV|, dVLB/dV = 1/2 (V^-1 - K_M^-1 + D^T diag(lam) D) (eq. 11b)."""
    L = torch.linalg.cholesky(cov.V)
    s = model.site_expectations(*model.marginals(m, cov))
    G = 0.5 * (torch.cholesky_solve(model.eye, L) - model.Sigma_solve(model.eye) + model.DtGD(s.lam))
    return float(G.abs().max())


def fp_block(model, m, cov, tol=GRAD_TOL, prog=F_TOL, max_iters=MAX_ITERS):
    """V <- T(V) at fixed m. After a step V = (K^-1 + D^T Gamma_old D)^-1, so the gradient there is
    1/2 D^T diag(gamma_old - gamma_new) D, no inverse needed. Returns (cov, steps, optimality)."""
    opt = dvlb_dV_inf(model, m, cov)
    if opt < tol:
        return cov, 0, opt
    F = model.vlb(m, cov)
    s = model.site_expectations(*model.marginals(m, cov))
    k = 0
    while k < max_iters:
        g_old = model.gamma(s)
        cov = model.fixed_point_update(g_old)
        s = model.site_expectations(*model.marginals(m, cov))
        F_new = float(s.E.sum() - model.kl(m, cov))
        opt = float((0.5 * model.DtGD(g_old - model.gamma(s))).abs().max())
        k += 1
        done = abs(F_new - F) < prog or opt < tol
        F = F_new
        if done:
            break
    return cov, k, opt


def grad_block(model, m, L0, tol=GRAD_TOL, prog=F_TOL, max_iters=MAX_ITERS, history=100):
    """L-BFGS on the lower-triangular L (V = L L^T) at fixed m. Returns (L, iterations, optimality)."""
    n = model.n
    idx = torch.tril_indices(n, n)

    def unpack(x):
        L = torch.zeros(n, n, dtype=m.dtype)
        L[idx[0], idx[1]] = torch.as_tensor(x, dtype=m.dtype)
        return L

    def fun(x):
        F, _, gL = model.vlb_grad_chol(m, unpack(x))
        if not np.isfinite(F):
            return np.inf, np.zeros_like(x)
        return -F, -gL[idx[0], idx[1]].numpy()

    x0 = L0[idx[0], idx[1]].numpy()
    st = {"f": fun(x0)[0], "k": 0, "g": float(np.abs(fun(x0)[1]).max())}
    if st["g"] <= tol:
        return L0, 0, st["g"]

    def cb(intermediate_result):
        r = intermediate_result
        st["k"] += 1
        f, g = fun(r.x)
        st["g"] = float(np.abs(g).max())
        if st["g"] <= tol or abs(st["f"] - f) <= prog:
            raise StopIteration
        st["f"] = f

    res = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", callback=cb,
                                  options={"maxiter": max_iters, "maxcor": history, "gtol": 0.0, "ftol": 0.0,
                                           "maxfun": 20 * max_iters})
    return unpack(res.x), st["k"], st["g"]


def train(model, method: str, m0, cov0: Cov, max_outer: int = 100, tol=GRAD_TOL, prog=F_TOL) -> Fit:
    c0 = time.process_time()
    m, cov = m0.clone(), cov0
    L = torch.linalg.cholesky(cov.V) if method == "grad" else None
    f_old = np.inf
    trace, reason, converged, it = [], "max_outer", False, 0
    while it < max_outer:
        it += 1
        m, km, om = newton_m(model, m, cov, tol, prog)
        if method == "fp":
            cov, kv, ov = fp_block(model, m, cov, tol, prog)
        else:
            L, kv, ov = grad_block(model, m, L, tol, prog)
            cov = Cov.from_chol(L)
        sites = model.site_expectations(*model.marginals(m, cov))
        f = -float(sites.E.sum() - model.kl(m, cov))
        # joint first-order optimality at the end of the sweep (the m-gradient after the V block, see docstring)
        om = float((model.Dt(sites.rho) - model.Sigma_solve(m - model.mu)).abs().max())
        trace.append({"outer": it, "cpu_s": time.process_time() - c0, "objective": f, "opt": max(om, ov),
                      "m_steps": km, "v_steps": kv})
        if max(om, ov) <= tol:
            reason, converged = "first_order_opt", True
            break
        if abs(f_old - f) <= prog or (km == 0 and kv == 0):
            reason, converged = "no_progress", True
            break
        f_old = f
    F = model.vlb(m, cov)
    return Fit(m, cov, -F, F, it, converged, reason, time.process_time() - c0, trace)
