"""bMC estimators (estimators/bmc.py): Jensen bias and convergence to the closed forms."""

import math

import gpytorch
import numpy as np
import pytest
import torch

from dlm_bench.estimators import BMCPredictiveLogLikelihood, BMCVariationalELBO
from dlm_bench.estimators.bmc import sampled_log_likelihoods
from dlm_bench.training import gpytorch_internals
from tests.helpers import build, make_problem, set_q


def exact_log_predictive(y, mu, var, noise):
    v = var + noise
    return -0.5 * np.log(2 * np.pi * v) - 0.5 * (y - mu) ** 2 / v


def fixed_case(wide=True):
    """Five points. wide: q(f_i) wide compared to the noise, so the log-mean-exp bias is large;
    otherwise narrow and y near mu, so that the Monte Carlo error at L = 10000 is ~3e-3 (a third of the tolerance)."""
    mu = torch.tensor([0.0, 0.5, -1.0, 2.0, 0.3], dtype=torch.float64)
    var = torch.tensor([1.0, 0.5, 2.0, 0.3, 1.5], dtype=torch.float64) * (1.0 if wide else 0.1)
    y = torch.tensor([0.2, -0.4, 0.5, 1.5, 0.0], dtype=torch.float64) if wide else mu + torch.tensor(
        [0.2, -0.3, 0.1, -0.2, 0.3], dtype=torch.float64)
    lik = gpytorch.likelihoods.GaussianLikelihood().double()
    lik.noise = 0.1 if wide else 0.5
    dist = gpytorch.distributions.MultivariateNormal(mu, torch.diag(var))
    exact = exact_log_predictive(y.numpy(), mu.numpy(), var.numpy(), lik.noise.item())
    return lik, dist, y, exact


def bmc_log_predictive(lik, dist, y, L):
    log_p = sampled_log_likelihoods(lik, dist, y, L)
    return (torch.logsumexp(log_p, 0) - math.log(L)).detach().numpy()


def test_bmc_is_biased_low_and_converges():
    torch.manual_seed(0)
    lik, dist, y, exact = fixed_case()
    reps = 2000
    mean_est = {L: np.mean([bmc_log_predictive(lik, dist, y, L) for _ in range(reps)], 0) for L in (1, 10, 100)}
    for L in (1, 10):
        assert np.all(mean_est[L] < exact), (L, mean_est[L], exact)  # Jensen: E[log mean] <= log E
    bias = {L: (exact - est).sum() for L, est in mean_est.items()}
    assert bias[1] > bias[10] > bias[100] > 0
    lik, dist, y, exact = fixed_case(wide=False)
    np.testing.assert_allclose(bmc_log_predictive(lik, dist, y, 10000), exact, atol=1e-2)


def test_sampled_log_likelihoods_are_gaussian_log_densities_at_the_samples():
    torch.manual_seed(1)
    lik, dist, y, _ = fixed_case()
    torch.manual_seed(1)
    log_p = sampled_log_likelihoods(lik, dist, y, 3)
    torch.manual_seed(1)
    f = dist.mean + dist.variance.sqrt() * torch.randn(3, 5, dtype=torch.float64)
    expected = -0.5 * torch.log(2 * math.pi * lik.noise) - 0.5 * (y - f) ** 2 / lik.noise
    torch.testing.assert_close(log_p, expected)


@pytest.mark.parametrize("name", ["dlm", "elbo"])
def test_bmc_objectives_approach_the_exact_ones(name):
    rng, X, y, Z = make_problem(0)
    model, lik = build(Z, True, 1.0, 1.0, 0.2)
    M = len(Z)
    set_q(model, 0.5 * rng.normal(size=M), 0.3 * np.eye(M))
    model.train(), lik.train()
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    exact_cls = {"dlm": gpytorch.mlls.PredictiveLogLikelihood, "elbo": gpytorch.mlls.VariationalELBO}[name]
    bmc_cls = {"dlm": BMCPredictiveLogLikelihood, "elbo": BMCVariationalELBO}[name]
    exact = exact_cls(lik, model, num_data=len(y), beta=0.5)(model(Xt), yt).item()
    torch.manual_seed(0)
    mll = bmc_cls(lik, model, num_data=len(y), beta=0.5, num_samples=20000)
    est = np.array([mll(model(Xt), yt).item() for _ in range(5)])
    # Monte Carlo standard error of the mean of 5 x 20000 samples is ~3e-3 here (the ELBO's log p is noisy)
    assert est.mean() == pytest.approx(exact, abs=1e-2)
    # gradients flow to the variational parameters through the reparameterised samples
    loss = -bmc_cls(lik, model, num_data=len(y), beta=0.5, num_samples=5)(model(Xt), yt)
    loss.backward()
    assert gpytorch_internals.q_u_module(model.variational_strategy).variational_mean.grad.abs().sum() > 0


def test_bmc_rejects_zero_samples():
    _, _, _, Z = make_problem(0)
    model, lik = build(Z, True, 1.0, 1.0, 0.2)
    with pytest.raises(ValueError, match="num_samples"):
        BMCPredictiveLogLikelihood(lik, model, num_data=10, num_samples=0)
