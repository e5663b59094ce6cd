"""The GPyTorch objectives we register, checked against numpy re-derivations (tests/reference.py)."""

import numpy as np
import pytest
import torch

from dlm_bench.objectives import OBJECTIVES
from tests import reference as ref
from tests.helpers import JITTER, build, make_problem, set_q


@pytest.mark.parametrize("whiten", [True, False])
@pytest.mark.parametrize("beta", [1.0, 0.5, 0.01])
@pytest.mark.parametrize("seed", [0, 1])
def test_dlm_log_loss_matches_numpy(whiten, beta, seed):
    rng, X, y, Z = make_problem(seed)
    lengthscale, outputscale, noise = rng.uniform(0.5, 2.0), rng.uniform(0.5, 2.0), rng.uniform(0.05, 0.5)
    model, likelihood = build(Z, whiten, lengthscale, outputscale, noise)
    M = len(Z)
    m = rng.normal(size=M)
    B = rng.normal(size=(M, M)) * 0.3
    S = B @ B.T + 0.1 * np.eye(M)
    set_q(model, m, S)

    mll = OBJECTIVES["dlm"].implementation(likelihood, model, num_data=len(y), beta=beta)
    model.train(), likelihood.train()
    loss = -mll(model(torch.as_tensor(X)), torch.as_tensor(y)).item()

    lengthscale_t = model.covar_module.base_kernel.lengthscale.item()
    outputscale_t = model.covar_module.outputscale.item()
    noise_t = likelihood.noise.item()
    mu, var, kl = ref.svgp_marginals(X, Z, m, S, lengthscale_t, outputscale_t, JITTER, whiten)
    expected = ref.dlm_log_loss(y, mu, var, noise_t, kl, beta)
    assert loss == pytest.approx(expected, abs=1e-6, rel=0)


@pytest.mark.parametrize("seed", [0, 3])
def test_elbo_at_titsias_optimum_equals_collapsed_sgpr_bound(seed):
    rng, X, y, Z = make_problem(seed, n=60, m=9)
    lengthscale, outputscale, noise = 1.3, 0.9, 0.2
    model, likelihood = build(Z, whiten=False, lengthscale=lengthscale, outputscale=outputscale, noise=noise)
    ls, os_, nz = (
        model.covar_module.base_kernel.lengthscale.item(),
        model.covar_module.outputscale.item(),
        likelihood.noise.item(),
    )
    m, S = ref.titsias_optimal_q(X, y, Z, ls, os_, nz, JITTER)
    set_q(model, m, S)
    mll = OBJECTIVES["elbo"].implementation(likelihood, model, num_data=len(y), beta=1.0)
    model.train(), likelihood.train()
    elbo_sum = mll(model(torch.as_tensor(X)), torch.as_tensor(y)).item() * len(y)
    bound = ref.collapsed_sgpr_bound(X, y, Z, ls, os_, nz, JITTER)
    assert elbo_sum == pytest.approx(bound, abs=1e-6, rel=0)

    # and it is the optimum: perturbing q(u) lowers the ELBO
    set_q(model, m + 0.05 * rng.normal(size=len(m)), S)
    perturbed = mll(model(torch.as_tensor(X)), torch.as_tensor(y)).item() * len(y)
    assert perturbed < bound - 1e-6


def test_beta_elbo_scales_only_the_kl():
    rng, X, y, Z = make_problem(5)
    model, likelihood = build(Z, True, 1.0, 1.0, 0.1)
    model.train(), likelihood.train()
    f = model(torch.as_tensor(X))
    yt = torch.as_tensor(y)
    l1 = OBJECTIVES["elbo"].implementation(likelihood, model, num_data=len(y), beta=1.0)(f, yt).item()
    l2 = OBJECTIVES["elbo"].implementation(likelihood, model, num_data=len(y), beta=0.1)(f, yt).item()
    kl = model.variational_strategy.kl_divergence().item()
    assert l2 - l1 == pytest.approx(0.9 * kl / len(y), abs=1e-9)
