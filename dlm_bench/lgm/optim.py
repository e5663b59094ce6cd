"""Optimisers of the VLB (Sheth & Khardon 2016, sec. 5; supplement sec. 2-3):

GRAD      L-BFGS jointly on (m, L), V = L L^T (Challis & Barber's vgai)
FPb       m by Newton to convergence, then V reset to Sigma and V <- T(V) until it converges or 2-cycles
FPi       one Newton step on m (Armijo line search), then one V <- T(V); repeat
FPi_mean  supplement: the natural-gradient "FP for the mean" step m <- T(V)(Sigma^-1 mu + sum_i (rho_i +
          gamma_i d_i^T m) d_i) = m + T(V) dF/dm (no line search; may diverge), then V <- T(V)

Stopping (paper supp. sec. 3): ||grad f||_inf <= 1e-5, |f_{k-1} - f_k| <= 1e-9, or k > 500, f = -VLB.
For the FP methods the V-part of the gradient is measured by the FP residual max|T(V) - V| (eq. 9:
dVLB/dV = 1/2 (V^-1 - T(V)^-1) vanishes exactly at a fixed point).
Every iteration appends a row (iteration, cpu_s, wall_s, objective, grad_inf, step) to the trace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
import torch

from ..config.stopping import F_TOL, GRAD_TOL, MAX_ITERS
from ..errors import ConfigError
from ..gpmath.lgm import LGM, Cov, newton_step
from ..papers.fp import OPTIMIZERS  # the lgm.optimizer choices, declared with LgmConfig


@dataclass
class StopRule:
    grad_tol: float = GRAD_TOL
    f_tol: float = F_TOL
    max_iters: int = MAX_ITERS


@dataclass
class OptResult:
    m: torch.Tensor
    cov: Cov
    vlb: float
    iterations: int
    converged: bool
    reason: str
    trace: list = field(default_factory=list)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    cycles: int = 0  # FPb: inner FP loops that ended in a 2-cycle


class _Clock:
    def __init__(self):
        self.c0, self.w0 = time.process_time(), time.perf_counter()

    def row(self, k, f, g, step):
        return {"iteration": k, "cpu_s": time.process_time() - self.c0, "wall_s": time.perf_counter() - self.w0,
                "objective": f, "grad_inf": g, "step": step}


def _state(model: LGM, m, cov: Cov):
    """Sites at (m, V), VLB and dF/dm."""
    s = model.site_expectations(*model.marginals(m, cov))
    F = float(s.E.sum() - model.kl(m, cov))
    gm = model.Dt(s.rho) - model.Sigma_solve(m - model.mu)
    return s, F, gm


def fit_fp(model: LGM, m0, cov0: Cov, variant: str = "fpi", stop: StopRule = StopRule(),
           fpb_inner: int = 100, cycle_tol: float = 1e-9, clock=None, on_iter=None) -> OptResult:
    """on_iter(m, cov): called after every outer iteration (tests: positive definiteness along the run)."""
    clock = clock or _Clock()
    m, cov = m0.clone(), cov0
    s, F, gm = _state(model, m, cov)
    trace = [clock.row(0, -F, float(gm.abs().max()), "init")]
    k, reason, cycles = 0, "max_iters", 0
    converged = False
    while k < stop.max_iters:
        k += 1
        F_prev = F
        if variant == "fpi":
            m, cov, res = _fpi_step(model, m, cov, s)
            step = "newton+fp"
        elif variant == "fpi_mean":
            m, cov, res = _fpi_mean_step(model, m, cov, s, gm)
            step = "fp_mean+fp"
        elif variant == "fpb":
            m, cov, res, cycled = _fpb_step(model, m, cov, s, k, stop, fpb_inner, cycle_tol, clock, trace)
            cycles += cycled
            step = "fpb_outer"
        else:
            raise ConfigError(f"unknown lgm.optimizer {variant!r}; valid choices: {', '.join(OPTIMIZERS)}")
        s, F, gm = _state(model, m, cov)
        g_inf = max(float(gm.abs().max()), res)
        trace.append(clock.row(k, -F, g_inf, step))
        if on_iter is not None:
            on_iter(m, cov)
        if not np.isfinite(F):
            reason = "diverged"
            break
        if g_inf <= stop.grad_tol:
            # with gamma clipped (Student-t) a fixed point of T is not a stationary point of the VLB in V
            reason, converged = "grad_m_and_fp_residual_tol", True
            break
        if abs(F_prev - F) <= stop.f_tol:
            reason, converged = "f_tol", True
            break
    last = trace[-1]
    return OptResult(m, cov, F, k, converged, reason, trace, last["cpu_s"], last["wall_s"], cycles)


def _fpi_step(model: LGM, m, cov: Cov, s):
    """FPi: one Newton step in m at fixed V, then one fixed-point update V <- T(V) at the new m."""
    m, _ = newton_step(model, m, cov, s.vq)
    s = model.site_expectations(*model.marginals(m, cov))
    cov_new = model.fixed_point_update(model.gamma(s))
    return m, cov_new, float((cov_new.V - cov.V).abs().max())


def _fpi_mean_step(model: LGM, m, cov: Cov, s, gm):
    """FPi with the fixed-point mean update: V <- T(V) and m <- T(V) (Sigma^-1 mu + D^T (rho + gamma * D m))."""
    gamma = model.gamma(s)
    cov_new = model.fixed_point_update(gamma)
    m = m + model.precision_solve(gamma, gm)
    return m, cov_new, float((cov_new.V - cov.V).abs().max())


def _fpb_step(model: LGM, m, cov: Cov, s, k: int, stop: StopRule, fpb_inner: int, cycle_tol: float, clock, trace):
    """FPb's outer iteration: (1) m to convergence by Newton at fixed V; (2) V reset to Sigma, then V <- T(V) until
    convergence or a 2-cycle (T^2(V) = V but T(V) != V, Theorem 1: the better of the two iterates is kept).
    Appends its inner iterations to `trace`; returns m, the covariance, the last V residual and 1 if it cycled."""
    for _ in range(fpb_inner):
        m, gain = newton_step(model, m, cov, s.vq)
        s, F, gm = _state(model, m, cov)
        trace.append(clock.row(k, -F, float(gm.abs().max()), "newton"))
        if float(gm.abs().max()) <= stop.grad_tol or abs(gain) <= stop.f_tol:
            break
    cov = model.prior_cov()
    covs, Vs = [cov], [cov.V]  # Cov.V is a product W^T W: formed once per iterate
    res = float("inf")
    for _ in range(fpb_inner):
        s = model.site_expectations(*model.marginals(m, cov))
        cov = model.fixed_point_update(model.gamma(s))
        V = cov.V
        res = float((V - Vs[-1]).abs().max())
        covs.append(cov)
        Vs.append(V)
        _, F_fp, gm_fp = _state(model, m, cov)
        trace.append(clock.row(k, -F_fp, float(gm_fp.abs().max()), "fp"))
        scale = max(1.0, float(V.abs().max()))
        if res <= cycle_tol * scale:
            break
        if len(Vs) >= 3 and float((V - Vs[-3]).abs().max()) <= cycle_tol * scale:
            better = covs[-1] if model.vlb(m, covs[-1]) >= model.vlb(m, covs[-2]) else covs[-2]
            return m, better, 0.0, 1  # residual 0: cannot do better in V at this m
    return m, cov, res, 0


def fit_grad(model: LGM, m0, L0, stop: StopRule = StopRule(), clock=None, history: int = 100) -> OptResult:
    """GRAD: scipy L-BFGS (strong-Wolfe-free, More-Thuente line search) on x = (m, tril L), f = -VLB
    with the analytic gradient; the paper's stopping rules are applied in the callback."""
    clock = clock or _Clock()
    n = model.n
    idx = torch.tril_indices(n, n)
    dtype = m0.dtype

    def unpack(x):
        x = torch.as_tensor(x, dtype=dtype)
        L = torch.zeros(n, n, dtype=dtype)
        L[idx[0], idx[1]] = x[n:]
        return x[:n], L

    def fun(x):
        m, L = unpack(x)
        F, gm, gL = model.vlb_grad_chol(m, L)
        g = torch.cat([gm, gL[idx[0], idx[1]]])
        if not np.isfinite(F):
            return np.inf, np.zeros_like(x)
        return -F, -g.numpy()

    x0 = torch.cat([m0, L0[idx[0], idx[1]]]).numpy()
    f0, g0 = fun(x0)
    trace = [clock.row(0, f0, float(np.abs(g0).max()), "init")]
    state = {"f": f0, "reason": "max_iters", "converged": False, "k": 0}

    def callback(intermediate_result):
        state["k"] += 1
        f = float(intermediate_result.fun)
        _, g = fun(intermediate_result.x)
        g_inf = float(np.abs(g).max())
        trace.append(clock.row(state["k"], f, g_inf, "lbfgs"))
        if g_inf <= stop.grad_tol:
            state.update(reason="grad_tol", converged=True)
            raise StopIteration
        if abs(state["f"] - f) <= stop.f_tol:
            state.update(reason="f_tol", converged=True)
            raise StopIteration
        state["f"] = f

    res = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", callback=callback,
                                  options={"maxiter": stop.max_iters, "maxcor": history, "gtol": 0.0,
                                           "ftol": 0.0, "maxfun": 20 * stop.max_iters + 100})
    m, L = unpack(res.x)
    cov = Cov.from_chol(L)
    F = -float(res.fun)
    last = trace[-1]
    reason = state["reason"] if state["converged"] else ("max_iters" if state["k"] >= stop.max_iters else
                                                         f"lbfgs: {res.message}")
    return OptResult(m, cov, F, state["k"], state["converged"], reason, trace, last["cpu_s"], last["wall_s"])


def optimise(model: LGM, optimizer: str, m0, L0, stop: StopRule = StopRule(), **kw) -> OptResult:
    """Start from m0 and V0 = L0 L0^T."""
    if optimizer == "grad":
        return fit_grad(model, m0, L0, stop, **kw)
    return fit_fp(model, m0, Cov.from_chol(L0), optimizer, stop, **kw)
