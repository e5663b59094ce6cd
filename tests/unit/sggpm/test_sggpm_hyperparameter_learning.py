"""sggpm hyperparameter learning (Fig. 4): the differentiable VLB(theta) and Laplace log q(theta) against the
fixed-hyperparameter model code and central finite differences; learning raises the objective."""

import numpy as np
import pytest
import torch

from dlm_bench.sggpm import hyperparameter_learning as H
from dlm_bench.sggpm.fit import fit_method
from dlm_bench.sggpm.laplace import init_from_laplace, laplace
from dlm_bench.sggpm.model import init_hyps, make_site, sod_model, sparse_model
from dlm_bench.sggpm.optim import train

N, M = 100, 12


def problem(task):
    g = torch.Generator().manual_seed(0)
    X = torch.rand(N, 3, generator=g, dtype=torch.float64)
    f = torch.sin(3 * X[:, 0]) + X[:, 1]
    if task == "count":
        y = torch.poisson(torch.exp(f), generator=g)
    elif task == "binary":
        y = torch.where(torch.rand(N, generator=g, dtype=torch.float64) < torch.sigmoid(2 * f), 1.0, -1.0).double()
    else:
        y = 1.0 + (f[:, None] > torch.tensor([0.0, 0.5, 1.0, 1.5], dtype=torch.float64)).sum(1).double()
    Z, yZ = X[-M:], y[-M:]
    hyp = init_hyps(task, Z, yZ.numpy(), 5 if task == "ordinal" else None)
    return X, y, Z, yZ, hyp, make_site(task, hyp)


def fd(fun, th, eps=1e-6):
    out = []
    for i in range(len(th)):
        e = torch.zeros_like(th)
        e[i] = eps
        out.append((float(fun(th + e)) - float(fun(th - e))) / (2 * eps))
    return np.array(out)


@pytest.mark.parametrize("task", ["count", "binary", "ordinal"])
@pytest.mark.parametrize("kind", ["sparse", "sod"])
def test_vlb_theta_value_and_gradient(task, kind):
    X, y, Z, yZ, hyp, site = problem(task)
    sod = sod_model(Z, yZ, site, hyp)
    model = sod if kind == "sod" else sparse_model(X, y, Z, site, hyp)
    m0, c0 = init_from_laplace(sod)
    fit = train(model, "fp", m0, c0, max_outer=5)
    Xh, yh = (Z, yZ) if kind == "sod" else (X, y)
    LV = torch.linalg.cholesky(fit.cov.V)

    def fun(t):
        return H.vlb_theta(t, task, hyp, site, Xh, yh, Z, fit.m, LV, kind)

    th = torch.tensor(H.theta_of(hyp, task), requires_grad=True)
    v = fun(th)
    assert abs(float(v.detach()) - model.vlb(fit.m, fit.cov)) <= 1e-9 * abs(model.vlb(fit.m, fit.cov))
    (g,) = torch.autograd.grad(v, th)
    ref = fd(fun, th.detach())
    assert np.allclose(g.numpy(), ref, rtol=1e-5, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("task", ["count", "binary", "ordinal"])
def test_laplace_logq_theta_value_and_gradient(task):
    X, y, Z, yZ, hyp, site = problem(task)
    th = torch.tensor(H.theta_of(hyp, task), requires_grad=True)
    v, _ = H.laplace_logq_theta(th, task, hyp, site, Z, yZ)
    # one Newton step past the mode (tolerance 1e-10 on the gradient): the sharp ordinal W moves log q by ~1e-9
    assert abs(float(v.detach()) - laplace(sod_model(Z, yZ, site, hyp))[2]) <= 1e-7 * abs(float(v.detach()))
    (g,) = torch.autograd.grad(v, th)
    ref = fd(lambda t: H.laplace_logq_theta(t, task, hyp, site, Z, yZ)[0], th.detach())
    assert np.allclose(g.numpy(), ref, rtol=1e-5, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("method", ["fp_sparse", "laplace_sod"])
def test_learning_raises_the_objective(method):
    X, y, Z, yZ, hyp, site = problem("count")
    _, fixed, h0 = fit_method(method, "count", X, y, M)
    _, learned, h1 = fit_method(method, "count", X, y, M, learn_hyperparameters=True)
    assert learned.objective < fixed.objective - 1e-3  # -VLB, or -log q for Laplace
    assert (h1.ell, h1.sf2, h1.mean) != (h0.ell, h0.sf2, h0.mean)
