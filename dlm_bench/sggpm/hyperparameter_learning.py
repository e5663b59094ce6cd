"""Hyperparameter learning (Sheth, Wang & Khardon 2015, Fig. 4, L219-224; upstream gen_gp_train's h block).

theta = [log ell, log sf2] (+ the constant mean for counts, unconstrained as upstream's hyp.mean); the ordinal
likelihood parameters stay at init_hyps' values (departure: upstream also learns hyp.lik).
  variational methods: L-BFGS on theta of the VLB at fixed q(f_U) = N(m, V) (the h block), alternated with the
    method's own fit (warm start for grad / FP; the dual restarts from its init), until the objective changes by
    <= 1e-6 (1 + |f|) or `max_rounds` rounds;
  Laplace-SoD: L-BFGS on theta of the approximate log marginal likelihood log q(y | theta), mode re-found per value.
Gradients by autograd: the VLB is rebuilt differentiably from theta; for log q the mode's dependence on theta enters
through one differentiable Newton step from the (detached) mode, f1 = f^ + H^-1 g(f^, theta): at the mode f1 = f^ and
df1/dtheta = df^/dtheta (implicit function theorem), so d log q(f1) / d theta is exact.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize
import torch

from ..config.stopping import F_TOL, GRAD_TOL
from ..gpmath.lgm import Cov, tri
from .laplace import laplace_mode, loglik_derivs
from .model import JITTER, Hyp, conditional, kernel, sod_model

HYP_MAX_ITERS = 100


def theta_of(hyp: Hyp, task: str) -> np.ndarray:
    th = [math.log(hyp.ell), math.log(hyp.sf2)]
    if task == "count":
        th.append(hyp.mean)
    return np.array(th)


def hyp_of(theta, hyp: Hyp, task: str) -> Hyp:
    t = [float(v) for v in theta]
    return Hyp(math.exp(t[0]), math.exp(t[1]), t[2] if task == "count" else hyp.mean, list(hyp.lik), hyp.kernel)


def _unpack(theta: torch.Tensor, hyp: Hyp, task: str):
    ell, sf2 = torch.exp(theta[0]), torch.exp(theta[1])
    mean = theta[2] if task == "count" else torch.tensor(float(hyp.mean), dtype=theta.dtype)
    return ell, sf2, mean


def vlb_theta(theta: torch.Tensor, task: str, hyp: Hyp, site, X, y, Z, m, LV, kind: str) -> torch.Tensor:
    """VLB(m, V = LV LV^T; theta) of the sparse (X = training rows) or SoD (X, y = the active rows) model."""
    ell, sf2, mean = _unpack(theta, hyp, task)
    M = Z.shape[0]
    KM = kernel(hyp.kernel, Z, Z, ell, sf2) + JITTER * torch.eye(M, dtype=Z.dtype)
    L = torch.linalg.cholesky(KM)
    r = m - mean
    if kind == "sod":
        mq, vq = m, (LV * LV).sum(1)
    else:
        D, c = conditional(hyp.kernel, X, Z, L, ell, sf2)
        DL = D @ LV
        mq, vq = mean + D @ r, c + (DL * DL).sum(1)
    E = site.site_expectations(y, mq, vq)[0].sum()
    Li_r = tri(L, r[:, None], upper=False)[:, 0]
    Li_LV = tri(L, LV, upper=False)
    logdet_K = 2 * torch.log(L.diagonal()).sum()
    logdet_V = 2 * torch.log(torch.abs(LV.diagonal())).sum()
    kl = 0.5 * ((Li_LV * Li_LV).sum() + Li_r @ Li_r - M + logdet_K - logdet_V)
    return E - kl


def laplace_logq_theta(theta: torch.Tensor, task: str, hyp: Hyp, site, Z, yZ, f0=None):
    """Approximate log marginal likelihood of the Laplace approximation on the active set, differentiable in theta.
    Returns (log q, mode)."""
    ell, sf2, mean = _unpack(theta, hyp, task)
    M = Z.shape[0]
    with torch.no_grad():
        sod = sod_model(Z, yZ, site, hyp_of(theta.detach().numpy(), hyp, task))
        fh = laplace_mode(sod, f0)
    KM = kernel(hyp.kernel, Z, Z, ell, sf2) + JITTER * torch.eye(M, dtype=Z.dtype)
    L = torch.linalg.cholesky(KM)
    _, d1, d2 = loglik_derivs(site, yZ, fh)
    W = (-d2).clamp_min(0.0)
    g = d1 - torch.cholesky_solve((fh - mean)[:, None], L)[:, 0]
    H = torch.cholesky_inverse(L) + torch.diag(W)
    f1 = fh + torch.linalg.solve(H, g)  # = fh at the mode; carries df^/dtheta
    lp, _, d2 = loglik_derivs(site, yZ, f1)
    W = (-d2).clamp_min(0.0)
    r = f1 - mean
    sW = torch.sqrt(W)
    B = torch.eye(M, dtype=Z.dtype) + sW[:, None] * KM * sW[None, :]
    LB = torch.linalg.cholesky(B)
    Li_r = tri(L, r[:, None], upper=False)[:, 0]
    logq = lp.sum() - 0.5 * Li_r @ Li_r - torch.log(LB.diagonal()).sum()
    return logq, fh.detach()


def _lbfgs(fun_t, theta0: np.ndarray, max_iters: int = HYP_MAX_ITERS):
    """Maximise fun_t(theta tensor) by L-BFGS-B on -fun (minFunc-like tolerances)."""

    def fg(x):
        t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        try:
            v = fun_t(t)
            (g,) = torch.autograd.grad(v, t)
        except (torch.linalg.LinAlgError, RuntimeError):
            return np.inf, np.zeros_like(x)
        v = float(v.detach())
        if not np.isfinite(v):
            return np.inf, np.zeros_like(x)
        return -v, -g.numpy()

    res = scipy.optimize.minimize(fg, theta0, jac=True, method="L-BFGS-B",
                                  options={"maxiter": max_iters, "gtol": GRAD_TOL, "ftol": F_TOL})
    return res.x, -float(res.fun), int(res.nit)


def learn_laplace(task, hyp: Hyp, site, Z, yZ, max_iters: int = HYP_MAX_ITERS):
    state = {"f": None}

    def obj(t):
        v, state["f"] = laplace_logq_theta(t, task, hyp, site, Z, yZ, state["f"])
        return v

    th, val, nit = _lbfgs(obj, theta_of(hyp, task), max_iters)
    return hyp_of(th, hyp, task), val, nit


def h_block(task, hyp: Hyp, site, X, y, Z, m, cov: Cov, kind: str, max_iters: int = HYP_MAX_ITERS):
    LV = torch.linalg.cholesky(cov.V)
    th, val, nit = _lbfgs(lambda t: vlb_theta(t, task, hyp, site, X, y, Z, m, LV, kind), theta_of(hyp, task),
                          max_iters)
    return hyp_of(th, hyp, task), val, nit
