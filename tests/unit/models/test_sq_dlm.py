"""Square-loss DLM: the closed-form m is the minimiser of the paper's objective (found numerically)."""

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from dlm_bench.config.schema import Kernel
from dlm_bench.gpmath.cholesky import jittered_cholesky
from dlm_bench.models import collapsed
from dlm_bench.models.components import make_kernel
from dlm_bench.models.sq_dlm import SqDLMBundle
from dlm_bench.objectives.sq_dlm import sq_dlm_solve
from tests import reference as ref

JITTER = 1e-8


def sq_dlm_objective(m, Kuu, Kuf, y, beta: float, jitter=0.0) -> torch.Tensor:
    """J(m) of objectives/sq_dlm.py for any m, by the same whitening (the closed form's minimum, and the
    gradient-descent check)."""
    L, _ = jittered_cholesky(Kuu, jitter)
    v = torch.linalg.solve_triangular(L, m.unsqueeze(-1), upper=False).squeeze(-1)  # L^{-1} m
    A = torch.linalg.solve_triangular(L, Kuf, upper=False)
    return 0.5 * (A.T @ v - y).square().sum() + 0.5 * beta * v.square().sum()


def problem(seed, n=60, d=2, m=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) - X[:, 1] + 0.2 * rng.normal(size=n)
    Z = 1.5 * rng.normal(size=(m, d))
    return rng, X, y, Z


@pytest.mark.parametrize("beta", [10.0, 1.0, 0.1])
@pytest.mark.parametrize("seed", [0, 1])
def test_closed_form_is_the_numerical_minimiser(seed, beta):
    rng, X, y, Z = problem(seed)
    ls, os_ = 1.2, 1.5
    Kuu, Kuf = ref.rbf(Z, Z, ls, os_), ref.rbf(Z, X, ls, os_)
    sol = sq_dlm_solve(torch.as_tensor(Kuu), torch.as_tensor(Kuf), torch.as_tensor(y), beta, JITTER)

    def fun(m):
        return ref.sq_dlm_objective(m, X, y, Z, ls, os_, JITTER, beta)

    res = minimize(fun, np.zeros(len(Z)), jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 10000})
    m_closed = sol.m.numpy()
    assert np.linalg.norm(fun(m_closed)[1]) < 1e-8  # stationary
    assert sol.loss.item() == pytest.approx(res.fun, abs=1e-9)  # the profiled value is the minimum
    assert sol.loss.item() == pytest.approx(fun(m_closed)[0], abs=1e-9)
    np.testing.assert_allclose(m_closed, res.x, rtol=1e-5, atol=1e-5)
    # the torch objective agrees with the numpy one away from the optimum too
    m_other = rng.normal(size=len(Z))
    got = sq_dlm_objective(torch.as_tensor(m_other), torch.as_tensor(Kuu), torch.as_tensor(Kuf), torch.as_tensor(y), beta, JITTER)
    assert got.item() == pytest.approx(fun(m_other)[0], rel=1e-10)


def test_lbfgs_on_m_reaches_the_closed_form():
    """L-BFGS in torch on J(m) (not on the profiled objective) converges to the same m."""
    _, X, y, Z = problem(2)
    Kuu, Kuf, yt = (torch.as_tensor(a) for a in (ref.rbf(Z, Z, 1.0, 1.0), ref.rbf(Z, X, 1.0, 1.0), y))
    beta = 1.0
    m = torch.zeros(len(Z), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([m], max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-14, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = sq_dlm_objective(m, Kuu, Kuf, yt, beta, JITTER)
        loss.backward()
        return loss

    for _ in range(5):
        opt.step(closure)
    np.testing.assert_allclose(m.detach().numpy(), sq_dlm_solve(Kuu, Kuf, yt, beta, JITTER).m.numpy(), rtol=1e-5, atol=1e-6)


def test_bundle_predicts_k_star_u_kuu_inv_m_and_no_variance():
    rng, X, y, Z = problem(3)
    kernel = make_kernel(Kernel.rbf, None)
    b = SqDLMBundle(kernel, torch.as_tensor(Z), torch.as_tensor(X), torch.as_tensor(y), beta=0.5).double()
    ls, os_ = kernel.base_kernel.lengthscale.item(), kernel.outputscale.item()
    jitter = collapsed.RELATIVE_JITTER[torch.float64] * os_
    Xs = rng.normal(size=(15, 2))
    mean, var = b.predict_f(torch.as_tensor(Xs))
    m = b.solve(b.X_train, b.y_train).m.detach().numpy()
    Kuu = ref.rbf(Z, Z, ls, os_) + jitter * np.eye(len(Z))
    np.testing.assert_allclose(mean.numpy(), ref.rbf(Xs, Z, ls, os_) @ np.linalg.solve(Kuu, m), atol=1e-9)
    assert var is None and b.noise is None
    # its loss is the objective at m* over N
    J = ref.sq_dlm_objective(m, X, y, Z, ls, os_, jitter, 0.5)[0]
    assert b.loss(b.X_train, b.y_train).item() == pytest.approx(J / len(y), abs=1e-10)
