"""Hyperparameters, estimated once and frozen for every optimiser (paper L197): RBF lengthscale and
outputscale by the GP marginal likelihood on 200 random training points -- exact for real-valued targets
(Gaussian noise; its variance also gives the Gaussian noise / Laplace scale b = sqrt(noise/2)), a Laplace
approximation (GPML Algorithm 3.1/5.1) for Poisson, logistic and probit. GLM: Sigma = prior_var I; the
Gaussian noise / Laplace scale from the residuals of the posterior-mean linear fit on the same points."""

from __future__ import annotations

import math

import numpy as np
import scipy.optimize
import torch

from ..gpmath.kernels import rbf
from ..gpmath.sites import Site
from ..papers.fp import REAL_LIKELIHOODS  # lgm.real_likelihood's choices, declared with LgmConfig


def _exact_nll(X, y, log_params):
    ell, sf2, sn2 = torch.exp(log_params)
    K = rbf(X, X, ell, sf2) + (sn2 + 1e-8) * torch.eye(X.shape[0], dtype=X.dtype)
    L = torch.linalg.cholesky(K)
    a = torch.cholesky_solve(y[:, None], L)[:, 0]
    return 0.5 * y @ a + torch.log(L.diagonal()).sum() + 0.5 * X.shape[0] * math.log(2 * math.pi)


def exact_gp_hyperparameters(X, y) -> dict:
    def fun(p):
        t = torch.tensor(p, dtype=X.dtype, requires_grad=True)
        f = _exact_nll(X, y, t)
        (g,) = torch.autograd.grad(f, t)
        return float(f.detach()), g.numpy()

    p0 = np.log([math.sqrt(X.shape[1]), 1.0, 0.1])
    res = scipy.optimize.minimize(fun, p0, jac=True, method="L-BFGS-B", bounds=[(-5, 5), (-7, 5), (-9, 3)])
    ell, sf2, sn2 = np.exp(res.x)
    return {"lengthscale": float(ell), "outputscale": float(sf2), "noise_var": float(sn2),
            "hyper_nll": float(res.fun)}


def laplace_log_marginal(X, y, site: Site, ell, sf2, iters=100):
    """GPML Algorithm 3.1 (stable B = I + W^1/2 K W^1/2 form), W = -d^2 log p(y|f) at the mode."""
    N = X.shape[0]
    K = rbf(X, X, ell, sf2) + 1e-8 * sf2 * torch.eye(N, dtype=X.dtype)
    f = torch.zeros(N, dtype=X.dtype)
    obj_old = -math.inf
    for _ in range(iters):
        _, g1, lam = site.point_terms(y, f)
        W = (-lam).clamp_min(1e-12)
        sW = torch.sqrt(W)
        L = torch.linalg.cholesky(torch.eye(N, dtype=X.dtype) + sW[:, None] * K * sW[None, :])
        b = W * f + g1
        a = b - sW * torch.cholesky_solve((sW * (K @ b))[:, None], L)[:, 0]
        f_new = K @ a
        E = site.point_terms(y, f_new)[0].sum()
        obj = float(-0.5 * a @ f_new + E)
        f = f_new
        if abs(obj - obj_old) < 1e-10:
            break
        obj_old = obj
    _, g1, lam = site.point_terms(y, f)
    sW = torch.sqrt((-lam).clamp_min(1e-12))
    L = torch.linalg.cholesky(torch.eye(N, dtype=X.dtype) + sW[:, None] * K * sW[None, :])
    return obj - float(torch.log(L.diagonal()).sum())


def laplace_gp_hyperparameters(X, y, site: Site) -> dict:
    def fun(p):
        try:
            return -laplace_log_marginal(X, y, site, math.exp(p[0]), math.exp(p[1]))
        except torch.linalg.LinAlgError:
            return math.inf

    p0 = np.array([math.log(math.sqrt(X.shape[1])), 0.0])
    res = scipy.optimize.minimize(fun, p0, method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-6, "maxiter": 300})
    ell, sf2 = np.exp(np.clip(res.x, -5, 5))
    return {"lengthscale": float(ell), "outputscale": float(sf2), "hyper_nll": float(res.fun)}


def glm_noise(X, y, prior_var) -> dict:
    """Posterior mean of w for the linear-Gaussian model (unit noise), then residual statistics."""
    n = X.shape[1]
    A = X.T @ X + torch.eye(n, dtype=X.dtype) / prior_var
    w = torch.cholesky_solve((X.T @ y)[:, None], torch.linalg.cholesky(A))[:, 0]
    r = y - X @ w
    return {"noise_var": float((r * r).mean()), "laplace_scale": float(r.abs().mean())}


def estimate(kind: str, likelihood: str, X, y, site: Site, prior_var: float) -> dict:
    """kind: glm | gp | sparse_gp; X, y: the (<= 200) points used for estimation."""
    if kind == "glm":
        return {"prior_var": prior_var, **(glm_noise(X, y, prior_var) if likelihood in REAL_LIKELIHOODS else {})}
    if likelihood in REAL_LIKELIHOODS:
        h = exact_gp_hyperparameters(X, y)
        h["laplace_scale"] = math.sqrt(h["noise_var"] / 2)  # Var of Laplace(b) = 2 b^2
        return h
    return laplace_gp_hyperparameters(X, y, site)
