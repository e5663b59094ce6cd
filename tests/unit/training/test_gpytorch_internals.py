"""Each function of training/gpytorch_internals.py against the public GPyTorch behaviour it stands for: a GPyTorch
upgrade that moves one of the private attributes fails here first."""

import copy
import math

import gpytorch
import numpy as np
import torch

from dlm_bench.training import gpytorch_internals as gi
from tests.helpers import JITTER, build, make_problem, set_q

LENGTHSCALE, OUTPUTSCALE, NOISE = 0.8, 1.3, 0.2


def problem(seed=0, whiten=True):
    rng, X, y, Z = make_problem(seed)
    model, lik = build(Z, whiten, LENGTHSCALE, OUTPUTSCALE, NOISE)
    return rng, torch.as_tensor(X), torch.as_tensor(y), Z, model, lik


def random_q(rng, m):
    a = rng.normal(size=(m, m))
    return rng.normal(size=m), a @ a.T / m + 0.1 * np.eye(m)


def test_q_u_module_gives_the_public_variational_distribution():
    rng, _, _, Z, model, _ = problem()
    mean, S = random_q(rng, len(Z))
    set_q(model, mean, S)
    strategy = model.variational_strategy
    public = strategy.variational_distribution
    np.testing.assert_allclose(public.mean.detach().numpy(), mean, rtol=1e-12)
    np.testing.assert_allclose(public.covariance_matrix.detach().numpy(), S, rtol=1e-10)
    own = gi.q_u_module(strategy)()
    assert torch.equal(own.mean, public.mean) and torch.equal(own.covariance_matrix, public.covariance_matrix)
    assert isinstance(gi.q_u_module(strategy), gpytorch.variational.CholeskyVariationalDistribution)
    assert {id(p) for p in gi.q_u_module(strategy).parameters()} == {id(p) for p in model.variational_parameters()}


def test_clear_cache_drops_the_memo_as_a_training_call_does():
    _, X, _, _, model, _ = problem()
    strategy = model.variational_strategy
    model.train()
    model(X)
    first = strategy.variational_distribution
    assert strategy.variational_distribution is first  # memoised
    model(X)  # GPyTorch's training-mode call starts from a fresh memo
    second = strategy.variational_distribution
    assert second is not first
    gi.clear_cache(strategy)
    assert strategy.variational_distribution is not second


def test_initialise_q_u_matches_the_first_training_call():
    _, X, _, _, fresh, _ = problem()
    called, ours = copy.deepcopy(fresh), copy.deepcopy(fresh)
    assert not fresh.variational_strategy.variational_params_initialized.item()
    called.train()
    torch.manual_seed(7)  # GPyTorch adds a small random perturbation to the prior mean
    called(X)
    torch.manual_seed(7)
    gi.initialise_q_u(ours.variational_strategy)
    a, b = called.state_dict(), ours.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    q = gi.q_u_module(ours.variational_strategy)
    assert not torch.equal(q.variational_mean, gi.q_u_module(fresh.variational_strategy).variational_mean)
    with torch.no_grad():
        q.variational_mean.fill_(0.5)
    gi.initialise_q_u(ours.variational_strategy)  # already initialised: as a later training call, nothing changes
    assert torch.all(q.variational_mean == 0.5)


def rbf(model, A, B):
    """The scaled SE kernel by hand, at the model's hyperparameters as stored (the constraint round trip moves them
    by about 1e-8)."""
    kernel = model.covar_module
    lengthscale, outputscale = kernel.base_kernel.lengthscale.item(), kernel.outputscale.item()
    assert math.isclose(lengthscale, LENGTHSCALE, rel_tol=1e-6) and math.isclose(outputscale, OUTPUTSCALE, rel_tol=1e-6)
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return outputscale * np.exp(-0.5 * d2 / lengthscale**2)


def test_cholesky_factor_is_the_memoised_chol_of_Kzz():
    _, _, _, Z, model, _ = problem()
    strategy = model.variational_strategy
    Zt = strategy.inducing_points
    Kzz = model.covar_module(Zt).add_jitter(JITTER)
    L = gi.cholesky_factor(strategy, Kzz).to_dense()
    expected = np.linalg.cholesky(rbf(model, Z, Z) + JITTER * np.eye(len(Z)))
    np.testing.assert_allclose(L.detach().numpy(), expected, rtol=1e-9, atol=1e-12)
    assert L.dtype == gi.cholesky_dtype()
    # memoised on the strategy (as VariationalStrategy.forward relies on) until the cache is cleared
    assert torch.equal(gi.cholesky_factor(strategy, Kzz * 4).to_dense(), L)
    gi.clear_cache(strategy)
    np.testing.assert_allclose(gi.cholesky_factor(strategy, Kzz * 4).to_dense().detach().numpy(), 2 * expected,
                               rtol=1e-9, atol=1e-12)


def test_cholesky_dtype_follows_the_public_linalg_dtypes_setting():
    assert gi.cholesky_dtype() == torch.float64  # GPyTorch's default
    with gpytorch.settings.linalg_dtypes(default=torch.float32, symeig=torch.float32, cholesky=torch.float32):
        assert gi.cholesky_dtype() == torch.float32
    assert gi.cholesky_dtype() == torch.float64


def test_is_q_u_entry_matches_the_public_variational_parameters():
    _, _, _, _, model, _ = problem()
    params = {n for n, _ in model.named_parameters()}
    variational = {n for n, _ in model.named_variational_parameters()}
    assert variational and {n for n in params if gi.is_q_u_entry(n)} == variational
    assert not any(gi.is_q_u_entry(n) for n, _ in model.named_hyperparameters())
    buffers = {n for n in model.state_dict() if n not in params}
    assert {n for n in buffers if gi.is_q_u_entry(n)} == {"variational_strategy.variational_params_initialized"}


def test_approximate_mll_combines_a_likelihood_term_as_the_elbo_does():
    """A subclass supplying E_q log p(y|f) is the beta-ELBO: GPyTorch's VariationalELBO and the closed form."""

    class HandELBO(gi.ApproximateMLL):
        def _log_likelihood_term(self, q_f, y, **kwargs):
            return self.likelihood.expected_log_prob(y, q_f, **kwargs).sum(-1)

    assert issubclass(gpytorch.mlls.VariationalELBO, gi.ApproximateMLL)
    assert issubclass(gpytorch.mlls.PredictiveLogLikelihood, gi.ApproximateMLL)
    rng, X, y, Z, model, lik = problem(seed=3)
    m, S = random_q(rng, len(Z))
    set_q(model, m, S)
    model.train()
    n, beta = len(y), 0.7
    ours = HandELBO(lik, model, num_data=n, beta=beta)(model(X), y).item()
    theirs = gpytorch.mlls.VariationalELBO(lik, model, num_data=n, beta=beta)(model(X), y).item()
    q_f = model(X)
    mu, var = q_f.mean.detach().numpy(), q_f.variance.detach().numpy()
    noise = lik.noise.item()
    assert math.isclose(noise, NOISE, rel_tol=1e-6)
    ell = np.sum(-0.5 * math.log(2 * math.pi * noise) - ((y.numpy() - mu) ** 2 + var) / (2 * noise))
    kl = 0.5 * (np.trace(S) + m @ m - len(Z) - np.linalg.slogdet(S)[1])  # whitened: KL(N(m, S) || N(0, I))
    assert math.isclose(ours, theirs, rel_tol=1e-12)
    assert math.isclose(ours, (ell - beta * kl) / n, rel_tol=1e-8)
