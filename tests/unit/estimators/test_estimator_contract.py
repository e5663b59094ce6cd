"""The estimator contract, run on every entry of dlm_bench.estimators.ESTIMATORS x the objectives it estimates
(`EstimatorSpec.mlls`) x likelihoods it applies to (Gaussian and Poisson-exp; probit and Poisson-exp for a
non-Gaussian-only estimator). A newly registered estimator is tested without editing this file, once it
declares below what it promises (a registered pair without a declaration fails with a message that says so):

* deterministic: the likelihood term equals a dense float64 grid reference (tests/helpers.py: the integrand is
  the torch distribution `forward(f).log_prob`), and the gradient of the whole loss w.r.t. the variational mean
  and the kernel lengthscale matches central finite differences (float64);
* unbiased: over many independent copies the sampled value and its gradient w.r.t. (mu, var) average to the
  grid references, within 4 standard errors;
* log_mean_exp: the mean of the log-mean-exp estimates is biased low (Jensen) and converges to its limit as L
  grows: bias(L=1) > bias(L=10) > bias(L=100) >= 0, each step larger than 4 standard errors of the difference;
* unbiased_gradient (uPS): the value is the deterministic log E_q[p(y|f)] and the gradient w.r.t. (mu, var)
  averages to the grid's exact gradient within 4 standard errors.
"""

from __future__ import annotations

import math

import gpytorch
import numpy as np
import pytest
import torch
from linear_operator.operators import DiagLinearOperator

from dlm_bench.estimators import ESTIMATORS
from dlm_bench.likelihoods import LIKELIHOODS
from dlm_bench.training import gpytorch_internals
from tests.gradcheck import assert_grads_match_finite_differences
from tests.helpers import build, grid_expectation, grid_log_marginal, make_likelihood, sample_targets, set_q

# What each (estimator, objective) promises. A new registry entry needs a line here.
EXPECTATIONS = {
    ("exact", "elbo"): "deterministic",
    ("exact", "dlm"): "deterministic",
    ("quadrature", "elbo"): "deterministic",
    ("quadrature", "dlm"): "deterministic",
    ("bmc", "elbo"): "unbiased",  # the sample mean of log p(y|f)
    ("bmc", "dlm"): "log_mean_exp",  # log of the sample mean of p(y|f): Jensen, biased low
    ("smooth_bmc", "dlm"): "log_mean_exp",
    ("ups", "dlm"): "unbiased_gradient",
}
# the L -> infinity limit of a log_mean_exp estimator, per point, given the exact log E_q[p(y|f)]
LIMITS = {
    "bmc": lambda mll, exact: exact,
    "smooth_bmc": lambda mll, exact: np.logaddexp(exact, math.log(mll.nu)),  # log(E_q p + nu)
}
KINDS = ("deterministic", "unbiased", "log_mean_exp", "unbiased_gradient")


def _cases():
    for name, spec in ESTIMATORS.items():
        likelihoods = ("probit", "poisson_exp") if spec.non_gaussian_only else ("gaussian", "poisson_exp")
        for objective in spec.mlls:
            for lik in likelihoods:
                yield name, objective, lik


CASES = list(_cases())


def _ids(cases):
    return ["-".join(c) for c in cases]


def expectation(name: str, objective: str) -> str:
    kind = EXPECTATIONS.get((name, objective))
    if kind not in KINDS:
        pytest.fail(f"estimator={name} is registered for objective={objective} but tests/unit/estimators/test_estimator_contract.py "
                    f"declares no expectation for the pair: add ({name!r}, {objective!r}) to EXPECTATIONS, one of {KINDS}")
    if kind == "log_mean_exp" and name not in LIMITS:
        pytest.fail(f"estimator={name} is a log_mean_exp estimator: add its L -> infinity limit to LIMITS")
    return kind


def of_kind(kind):
    cases = [c for c in CASES if EXPECTATIONS.get(c[:2]) == kind]
    return pytest.mark.parametrize("name,objective,lik", cases, ids=_ids(cases))


def make_mll(name, objective, likelihood, model, num_data, num_samples=None):
    """The registered MLL class; model None: a small SVGP that only the KL term would read (the checks on fixed
    marginals call the likelihood term alone)."""
    spec = ESTIMATORS[name]
    model = build(np.linspace(-1, 1, 3)[:, None], True, 1.0, 1.0, 0.1)[0] if model is None else model
    kwargs = {"num_samples": num_samples} if spec.sampling else {}
    return spec.mlls[objective](likelihood, model, num_data=num_data, beta=1.0, **kwargs)


def per_point_reference(objective, likelihood, y, mu, var) -> np.ndarray:
    """The exact likelihood term per point on the dense float64 grid: log E_q[p(y|f)] (dlm) or
    E_q[log p(y|f)] (elbo)."""
    if objective == "dlm":
        return np.array([grid_log_marginal(likelihood, yi, m, v) for yi, m, v in zip(y, mu, var)])
    if objective == "elbo":
        return np.array([grid_expectation(lambda f: likelihood.forward(f).log_prob(torch.full_like(f, yi)), m, v)
                         for yi, m, v in zip(y, mu, var)])
    pytest.fail(f"no grid reference for objective={objective}: add one to per_point_reference")


def per_point_gradient_reference(objective, likelihood, y, mu, var) -> np.ndarray:
    """d/dmu and d/dvar of the exact per-point term, (N, 2), on the grid: for E_q[g(f)] the score identities
    E_q[g (f-mu)/var] and E_q[g ((f-mu)^2/var^2 - 1/var)/2]; for log E_q[p] the same with g = p, over E_q[p]."""
    out = []
    for yi, m, v in zip(y, mu, var):
        logp = lambda f: likelihood.forward(f).log_prob(torch.full_like(f, yi))  # noqa: E731
        g = logp if objective == "elbo" else (lambda f: logp(f).exp())
        d_mu = grid_expectation(lambda f: g(f) * (f - m) / v, m, v)
        d_var = grid_expectation(lambda f: g(f) * 0.5 * ((f - m) ** 2 / v**2 - 1 / v), m, v)
        if objective == "dlm":
            norm = grid_expectation(lambda f: g(f), m, v)
            d_mu, d_var = d_mu / norm, d_var / norm
        out.append((d_mu, d_var))
    return np.array(out)


# --- fixed marginals q(f_i) and targets ---------------------------------------------------------------------------
MU = torch.tensor([0.3, -1.2, 1.0, 0.0, 0.8], dtype=torch.float64)
VAR = torch.tensor([0.5, 0.25, 0.6, 0.1, 0.4], dtype=torch.float64)


def likelihood_and_targets(lik_name, seed=0):
    lik = make_likelihood(LIKELIHOODS[lik_name])
    g = torch.Generator().manual_seed(seed)
    f = MU + VAR.sqrt() * torch.randn(MU.shape, generator=g, dtype=torch.float64)
    torch.manual_seed(seed)
    return lik, sample_targets(lik, f)


def svgp_problem(lik_name, seed=0, n=12, m=4):
    """A float64 SVGP with a random q(u) on 1-D inputs, targets drawn from the likelihood at q's means."""
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(-2, 2, size=(n, 1)), 0)
    Z = np.linspace(-1.5, 1.5, m)[:, None]
    lik = make_likelihood(LIKELIHOODS[lik_name])
    model, lik = build(Z, True, 0.8, 1.0, None, likelihood=lik)
    B = rng.normal(size=(m, m)) * 0.2
    set_q(model, 0.5 * rng.normal(size=m), B @ B.T + 0.3 * np.eye(m))
    model.train(), lik.train()
    Xt = torch.as_tensor(X)
    with torch.no_grad():
        f = model(Xt).mean
    torch.manual_seed(seed)
    return model, lik, Xt, sample_targets(lik, f)


def copies(reps, mean=MU, var=VAR, batch=True, requires_grad=False):
    """q(f) for `reps` independent copies of the fixed marginals: a batch (reps, N) or flat (reps * N)."""
    mu, v = mean.repeat(reps, 1), var.repeat(reps, 1)
    if not batch:
        mu, v = mu.reshape(-1), v.reshape(-1)
    if requires_grad:
        mu, v = mu.clone().requires_grad_(), v.clone().requires_grad_()
    return gpytorch.distributions.MultivariateNormal(mu, DiagLinearOperator(v)), mu, v


# --- the checks ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,objective,lik", CASES, ids=_ids(CASES))
def test_every_registered_estimator_declares_what_it_promises(name, objective, lik):
    kind = expectation(name, objective)
    assert ESTIMATORS[name].sampling == (kind != "deterministic"), (
        f"estimator={name}: EstimatorSpec.sampling={ESTIMATORS[name].sampling} but the test expects {kind}")


@of_kind("deterministic")
def test_deterministic_value_vs_dense_grid(name, objective, lik):
    likelihood, y = likelihood_and_targets(lik)
    mll = make_mll(name, objective, likelihood, None, num_data=len(y))
    with torch.no_grad():
        got = mll._log_likelihood_term(copies(1, batch=False)[0], y).item()
    want = per_point_reference(objective, likelihood, y.tolist(), MU.tolist(), VAR.tolist()).sum()
    assert got == pytest.approx(want, rel=1e-6, abs=1e-6)


@of_kind("deterministic")
def test_deterministic_gradient_vs_finite_differences(name, objective, lik):
    model, likelihood, X, y = svgp_problem(lik)
    mll = make_mll(name, objective, likelihood, model, num_data=len(y))
    params = [gpytorch_internals.q_u_module(model.variational_strategy).variational_mean,
              model.covar_module.base_kernel.raw_lengthscale]
    assert_grads_match_finite_differences(lambda: -mll(model(X), y), params, h=1e-5, rtol=1e-5, atol=1e-7)


@of_kind("unbiased")
def test_sampled_value_and_gradient_are_unbiased(name, objective, lik):
    likelihood, y = likelihood_and_targets(lik)
    reps = 4000
    torch.manual_seed(1)
    dist, mu, var = copies(reps, batch=False, requires_grad=True)
    mll = make_mll(name, objective, likelihood, None, num_data=len(y), num_samples=1)
    yy = y.repeat(reps)
    value = mll._log_likelihood_term(dist, yy)
    value.backward()
    # one copy's value: its N points' terms (independent across copies); the sum over copies is the total
    with torch.no_grad():
        per_copy = torch.stack([mll._log_likelihood_term(copies(1, batch=False)[0], y) for _ in range(400)]).numpy()
    want = per_point_reference(objective, likelihood, y.tolist(), MU.tolist(), VAR.tolist())
    se = per_copy.std(ddof=1) / math.sqrt(len(per_copy))
    assert abs(per_copy.mean() - want.sum()) < 4 * se, (per_copy.mean(), want.sum(), se)
    assert value.item() / reps == pytest.approx(want.sum(), abs=4 * per_copy.std(ddof=1) / math.sqrt(reps))
    grads = np.stack([mu.grad.reshape(reps, -1).numpy(), var.grad.reshape(reps, -1).numpy()], -1)  # (reps, N, 2)
    g_ref = per_point_gradient_reference(objective, likelihood, y.tolist(), MU.tolist(), VAR.tolist())
    se = grads.std(0, ddof=1) / math.sqrt(reps)
    assert (se > 0).all()  # really sampled
    assert np.all(np.abs(grads.mean(0) - g_ref) < 4 * se), (grads.mean(0), g_ref, se)


@of_kind("log_mean_exp")
def test_log_mean_exp_bias_shrinks_with_L_to_the_limit(name, objective, lik):
    likelihood, y = likelihood_and_targets(lik)
    exact = per_point_reference(objective, likelihood, y.tolist(), MU.tolist(), VAR.tolist())
    reps = 2000
    dist, _, _ = copies(reps)
    yy = y.repeat(reps, 1)
    torch.manual_seed(2)
    bias, se = {}, {}
    for L in (1, 10, 100):
        mll = make_mll(name, objective, likelihood, None, num_data=len(y), num_samples=L)
        with torch.no_grad():
            est = mll._log_likelihood_term(dist, yy).numpy()  # (reps,): each copy's sum over its N points
        assert est.shape == (reps,)
        limit = LIMITS[name](mll, exact).sum()
        bias[L], se[L] = limit - est.mean(), est.std(ddof=1) / math.sqrt(reps)
    diff_se = lambda a, b: math.hypot(se[a], se[b])  # noqa: E731
    assert bias[1] - bias[10] > 4 * diff_se(1, 10), (bias, se)
    assert bias[10] - bias[100] > 4 * diff_se(10, 100), (bias, se)
    assert bias[100] > -4 * se[100], (bias, se)  # Jensen: never above the limit
    assert bias[100] < 0.3 * bias[10] + 4 * diff_se(10, 100), (bias, se)  # ~ 1/L: a tenth of bias(L=10)


@of_kind("unbiased_gradient")
def test_gradient_is_unbiased_and_value_exact(name, objective, lik):
    likelihood, y = likelihood_and_targets(lik)
    reps = 500
    torch.manual_seed(3)
    dist, mu, var = copies(reps, batch=False, requires_grad=True)
    mll = make_mll(name, objective, likelihood, None, num_data=len(y), num_samples=2)
    value = mll._log_likelihood_term(dist, y.repeat(reps))
    want = per_point_reference(objective, likelihood, y.tolist(), MU.tolist(), VAR.tolist())
    assert value.item() / reps == pytest.approx(want.sum(), rel=1e-6, abs=1e-6)
    value.backward()
    grads = np.stack([mu.grad.reshape(reps, -1).numpy(), var.grad.reshape(reps, -1).numpy()], -1)
    g_ref = per_point_gradient_reference(objective, likelihood, y.tolist(), MU.tolist(), VAR.tolist())
    se = grads.std(0, ddof=1) / math.sqrt(reps)
    assert (se > 0).all()  # really sampled
    assert np.all(np.abs(grads.mean(0) - g_ref) < 4 * se), (grads.mean(0), g_ref, se)
