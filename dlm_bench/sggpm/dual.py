"""The dual method (Khan et al. 2013, eq. 20) with the sparse augmentation of Sheth, Wang & Khardon 2015 (L146).

With W = K_NM K_M^-1 (SoD: W = I, K_N = K_M), K~ = W K_M W^T, m~ = m_X (the prior mean at the training inputs),
c = diag(K_N - W K_M W^T), Lambda = diag(lambda), alpha = y - lambda:
    D(lambda) = sum_i f*(lambda_i) + alpha^T m~ + 1/2 alpha^T K~ alpha - 1/2 lambda^T c
                - 1/2 log|I + K_M W^T Lambda W|                                      (minimised over lambda)
Conjugates f*: Poisson lambda (log lambda - 1) - log y!  (lambda > 0);
               logistic lambda log lambda + (1 - lambda) log(1 - lambda)  (0 < lambda < 1; y in {0, 1} here).
For Poisson D(lambda*) = VLB* (strong duality); the gradient is dD/dlambda = f*'(lambda) - (m_q + v_q / 2) with
m_q = m~ + K~ alpha and v_q = c + diag(W V W^T), V = (K_M^-1 + W^T Lambda W)^-1. Recovery (upstream):
m = m_U + K_M W^T alpha, V as above. L-BFGS with bound constraints keeps lambda inside its domain (upstream bounds the
line-search step instead, minFunc_rs + dual_max_step_func).
Init (calc_dualconj.m, paper L204): SoD lambda0 = y + K_M^-1 (m_U - m_Laplace) (Khan eq. 17), clipped into the domain
at 1e-3; sparse lambda0 = 1 (count), 1/2 (binary).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.optimize
import torch

from ..config.stopping import F_TOL, GRAD_TOL, MAX_ITERS
from ..errors import ConfigError
from ..gpmath.sites import LogisticSite, PoissonSite
from .optim import Fit

EPS = 1e-12


def _kind(site):
    if isinstance(site, PoissonSite):
        return "poisson"
    if isinstance(site, LogisticSite):
        return "logistic"
    raise ConfigError("the dual method is defined for Poisson and logistic likelihoods only (paper L185)")


def dual_y(model):
    return model.y if _kind(model.site) == "poisson" else (model.y > 0).to(model.y.dtype)


def conjugate(kind, lam, y):
    if kind == "poisson":
        return (lam * (torch.log(lam) - 1)).sum() - torch.lgamma(y + 1.0).sum(), torch.log(lam)
    return (lam * torch.log(lam) + (1 - lam) * torch.log1p(-lam)).sum(), torch.log(lam) - torch.log1p(-lam)


def recover(model, lam):
    """(m, Cov of V) from lambda: m = m_U + K_M W^T alpha (= m + alpha for SoD), V = (K_M^-1 + W^T Lambda W)^-1."""
    alpha = dual_y(model) - lam
    KM_Wt_alpha = model.L_M @ (model.L_M.T @ model.Dt(alpha))
    return model.mu + KM_Wt_alpha, model.fixed_point_update(lam)


def dual_objective(model, lam, grad: bool = True):
    """D(lambda) and dD/dlambda (torch, float64)."""
    kind = _kind(model.site)
    y = dual_y(model)
    fs, dfs = conjugate(kind, lam, y)
    alpha = y - lam
    WtA = model.Dt(alpha)
    KWtA = model.L_M @ (model.L_M.T @ WtA)  # K_M W^T alpha
    mX = model.a + model.Dm(model.mu)  # m~ = m_X
    mq = mX + model.Dm(KWtA)
    cov = model.fixed_point_update(lam)  # V = (K^-1 + W^T Lambda W)^-1 with log|V|
    # -1/2 log|I + K W^T Lambda W| = 1/2 (log|V| - log|K|)
    D = fs + alpha @ mX + 0.5 * WtA @ KWtA - 0.5 * lam @ model.c + 0.5 * (cov.logdet - model.logdet_S)
    if not grad:
        return float(D), None
    WD = cov.W if model.D is None else cov.W @ model.D.T
    vq = model.c + (WD * WD).sum(0)
    return float(D), dfs - (mq + 0.5 * vq)


def init_lambda(model, m_laplace=None):
    kind = _kind(model.site)
    y = dual_y(model)
    if model.kind == "sod" and m_laplace is not None:
        lam = y + model.Sigma_solve(model.mu - m_laplace)
        lam = torch.where(lam <= 0, torch.full_like(lam, 1e-3), lam)
        if kind == "logistic":
            lam = torch.where(lam >= 1, torch.full_like(lam, 1 - 1e-3), lam)
        return lam
    return torch.full_like(y, 1.0 if kind == "poisson" else 0.5)


def fit_dual(model, lam0, tol=GRAD_TOL, prog=F_TOL, max_iters=MAX_ITERS, history=100, upper_bound: bool = True) -> Fit:
    """L-BFGS-B on D(lambda) inside its domain. upper_bound=False (logistic only; sggpm.dual_upper_bound) is
    upstream's reading: its step rule (dual_max_step_func.m) keeps lambda > 0 only, and a step to lambda >= 1 finds
    D = +inf (calc_dualconj.m), which the line search must back out of. On musk it stalls after 10-14 iterations,
    the paper's dual "convergence failures" (L211; docs/reproductions/sggpm_fig2_musk)."""
    c0 = time.process_time()
    kind = _kind(model.site)
    hi = np.inf if kind == "poisson" or not upper_bound else 1 - EPS
    bounds = [(EPS, hi)] * lam0.shape[0]

    def fun(x):
        if kind == "logistic" and np.any(x >= 1):  # outside the conjugate's domain (upper_bound=False only)
            return np.inf, np.full_like(x, np.inf)
        lam = torch.as_tensor(x, dtype=torch.float64)
        D, g = dual_objective(model, lam)
        return D, g.numpy()

    st = {"k": 0, "f": fun(lam0.numpy())[0], "reason": "max_iters"}
    trace = [{"iteration": 0, "cpu_s": time.process_time() - c0, "objective": st["f"]}]

    def cb(intermediate_result):
        st["k"] += 1
        f = float(intermediate_result.fun)
        trace.append({"iteration": st["k"], "cpu_s": time.process_time() - c0, "objective": f})
        g = fun(intermediate_result.x)[1]
        # projected gradient (components at an active bound pointing outward do not count)
        x = intermediate_result.x
        pg = np.where((x <= EPS) & (g > 0) | (x >= hi) & (g < 0), 0.0, g)
        if np.abs(pg).max() <= tol:
            st["reason"] = "first_order_opt"
            raise StopIteration
        if abs(st["f"] - f) <= prog:
            st["reason"] = "no_progress"
            raise StopIteration
        st["f"] = f

    res = scipy.optimize.minimize(fun, lam0.numpy(), jac=True, method="L-BFGS-B", bounds=bounds, callback=cb,
                                  options={"maxiter": max_iters, "maxcor": history, "gtol": 0.0, "ftol": 0.0,
                                           "maxfun": 20 * max_iters})
    lam = torch.as_tensor(res.x, dtype=torch.float64)
    m, cov = recover(model, lam)
    vlb = model.vlb(m, cov)
    return Fit(m, cov, float(res.fun), vlb, st["k"], st["reason"] != "max_iters", st["reason"],
               time.process_time() - c0, trace, {"lambda": lam})
