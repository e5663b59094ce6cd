"""Collapsed SGPR / FITC (models/collapsed.py, models/sgpr.py) against dense numpy re-derivations."""

import gpytorch
import numpy as np
import pytest
import torch

from dlm_bench.config.schema import Kernel
from dlm_bench.models import collapsed
from dlm_bench.models.components import make_kernel
from dlm_bench.models.sgpr import CollapsedBundle
from tests import reference as ref
from tests.gradcheck import assert_grads_match_finite_differences


def make_bundle(seed, alpha, n=50, d=2, m=8):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n)
    Z = rng.normal(size=(m, d))
    kernel = make_kernel(Kernel.rbf, None)
    kernel.base_kernel.lengthscale = rng.uniform(0.5, 1.5)
    kernel.outputscale = rng.uniform(0.5, 2.0)
    lik = gpytorch.likelihoods.GaussianLikelihood()
    lik.noise = rng.uniform(0.05, 0.3)
    b = CollapsedBundle(kernel, torch.as_tensor(Z), lik, torch.as_tensor(X), torch.as_tensor(y), alpha).double()
    return b, X, y, rng


def hypers(b):
    ls = b.kernel.base_kernel.lengthscale.item()
    os_ = b.kernel.outputscale.item()
    jitter = collapsed.RELATIVE_JITTER[torch.float64] * os_  # default_jitter: relative to mean diag Kuu
    return ls, os_, b.noise.item(), jitter, b.Z.detach().numpy()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.0])
def test_objective_matches_dense_reference(seed, alpha):
    b, X, y, _ = make_bundle(seed, alpha)
    ls, os_, noise, jitter, Z = hypers(b)
    got = b.loss(b.X_train, b.y_train).item() * len(y)
    expected = ref.power_ep_neg_log_marginal(X, y, Z, ls, os_, noise, jitter, alpha)
    assert got == pytest.approx(expected, abs=1e-8, rel=1e-10)


@pytest.mark.parametrize("seed", [0, 3])
def test_sgpr_is_the_negative_titsias_bound(seed):
    b, X, y, _ = make_bundle(seed, alpha=0.0)
    ls, os_, noise, jitter, Z = hypers(b)
    bound = ref.collapsed_sgpr_bound(X, y, Z, ls, os_, noise, jitter)
    assert b.loss(b.X_train, b.y_train).item() * len(y) == pytest.approx(-bound, abs=1e-8)


def test_alpha_family_is_continuous_at_vfe():
    b, _, y, _ = make_bundle(4, alpha=0.0)
    vfe = b.loss(b.X_train, b.y_train).item()
    gaps = []
    for alpha in (1e-6, 1e-7, 1e-8):
        b.alpha = alpha
        gaps.append(abs(b.loss(b.X_train, b.y_train).item() - vfe))
    assert gaps[2] < 1e-6 and gaps[0] > 5 * gaps[1] > 25 * gaps[2]  # O(alpha) convergence


def test_sgpr_predictive_is_the_titsias_optimal_q_u():
    b, X, y, rng = make_bundle(5, alpha=0.0)
    ls, os_, noise, jitter, Z = hypers(b)
    Xs = rng.normal(size=(20, X.shape[1]))
    m, S = ref.titsias_optimal_q(X, y, Z, ls, os_, noise, jitter)
    mu_ref, var_ref, _ = ref.svgp_marginals(Xs, Z, m, S, ls, os_, jitter, whiten=False)
    mu, var = b.predict_f(torch.as_tensor(Xs))
    np.testing.assert_allclose(mu.numpy(), mu_ref, atol=1e-8)
    np.testing.assert_allclose(var.numpy(), var_ref, atol=1e-8)
    # and q_u returns the same N(m, S)
    a_M, R = collapsed.q_u(b.terms(b.X_train, b.y_train))
    np.testing.assert_allclose(a_M.detach().numpy(), m, atol=1e-7)
    np.testing.assert_allclose((R @ R.T).detach().numpy(), S, atol=1e-7)


def test_fitc_predictive_matches_dense_reference():
    b, X, y, rng = make_bundle(6, alpha=1.0)
    ls, os_, noise, jitter, Z = hypers(b)
    Xs = rng.normal(size=(20, X.shape[1]))
    mu_ref, var_ref = ref.fitc_predict(X, y, Xs, Z, ls, os_, noise, jitter)
    mu, var = b.predict_f(torch.as_tensor(Xs))
    np.testing.assert_allclose(mu.numpy(), mu_ref, atol=1e-8)
    np.testing.assert_allclose(var.numpy(), var_ref, atol=1e-8)


@pytest.mark.parametrize("alpha", [1.0, 0.0])
def test_predict_at_inputs_is_the_dense_predictive_at_the_training_points(alpha):
    """The shortcut PAC-SGP's loss takes (A and lambda reused) against the dense FITC reference (alpha = 1)
    and the Titsias q(u) projected through p(f|u) (alpha = 0), at the training inputs themselves."""
    b, X, y, _ = make_bundle(8, alpha)
    ls, os_, noise, jitter, Z = hypers(b)
    if alpha == 1.0:
        mu_ref, var_ref = ref.fitc_predict(X, y, X, Z, ls, os_, noise, jitter)
    else:
        m, S = ref.titsias_optimal_q(X, y, Z, ls, os_, noise, jitter)
        mu_ref, var_ref, _ = ref.svgp_marginals(X, Z, m, S, ls, os_, jitter, whiten=False)
    with torch.no_grad():
        t = b.terms(b.X_train, b.y_train)
        mu, var = collapsed.predict_at_inputs(t)
    np.testing.assert_allclose(mu.numpy(), mu_ref, atol=1e-8)
    np.testing.assert_allclose(var.numpy(), var_ref, atol=1e-8)
    with pytest.raises(ValueError, match="keeps no A"):
        collapsed.predict_at_inputs(b.blocked_terms(b.X_train, b.y_train))


@pytest.mark.parametrize("alpha", [1.0, 0.0])
def test_gradients_match_finite_differences(alpha):
    """Kernel hyperparameters, noise and Z (raw, unconstrained parameters)."""
    b, _, _, _ = make_bundle(7, alpha)
    params = b.trainable_parameters()
    assert {n for n, _ in b.named_parameters()} >= {"Z", "likelihood.noise_covar.raw_noise"}
    assert_grads_match_finite_differences(lambda: b.loss(b.X_train, b.y_train), params)
