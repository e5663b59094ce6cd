"""FP-update diagnostics (Fig. 1(b)(c), supplement Fig. 2): the recorded marginals of the 2nd FP update against a
direct numpy computation, and the 2-cycle detector."""

import numpy as np
import pytest
import torch

from dlm_bench.lgm import fpdiag
from dlm_bench.gpmath.lgm import glm
from dlm_bench.gpmath.sites import make_site


def _tiny_poisson(seed=0, n=12, d=3, s=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.7
    y = rng.poisson(np.exp(X @ rng.normal(size=d) * 0.5)).astype(float)
    return X, y, glm(torch.as_tensor(X), torch.as_tensor(y), make_site("poisson"), s)


def _T_numpy(X, s, gamma):
    return np.linalg.inv(np.eye(X.shape[1]) / s + X.T @ (gamma[:, None] * X))


def test_second_fp_update_marginals_match_numpy_fixed_m():
    X, y, model = _tiny_poisson()
    s, v0 = 0.5, 1.0
    m = np.array([0.2, -0.1, 0.3])
    recs, final = fpdiag.fp_trace(model, torch.as_tensor(m), fpdiag.cov_scaled_identity(3, v0), 3)
    V = v0 * np.eye(3)
    for k in range(3):  # record k + 1 is computed at V = T^k(V0); Poisson gamma = exp(m + v / 2) in closed form
        mq, vq = X @ m, np.einsum("id,de,ie->i", X, V, X)
        np.testing.assert_allclose(recs[k]["mq"].numpy(), mq, rtol=1e-12)
        np.testing.assert_allclose(recs[k]["vq"].numpy(), vq, rtol=1e-10)
        np.testing.assert_allclose(recs[k]["gamma"].numpy(), np.exp(mq + vq / 2), rtol=1e-10)
        V = _T_numpy(X, s, np.exp(mq + vq / 2))
    np.testing.assert_allclose(final.V.numpy(), V, rtol=1e-9, atol=1e-12)  # after three T applications


def test_second_fp_update_marginals_match_numpy_fpi():
    """newton=True (FPi): record 2 holds m after two Newton steps and V = T(V0); check both against numpy."""
    X, y, model = _tiny_poisson(seed=1)
    s = 0.5
    recs, _ = fpdiag.fp_trace(model, torch.zeros(3, dtype=torch.float64), fpdiag.cov_scaled_identity(3, 1.0), 2,
                              newton=True)
    m1, m2 = recs[0]["m"].numpy(), recs[1]["m"].numpy()
    assert np.abs(m1).max() > 0 and np.abs(m2 - m1).max() > 0  # Newton moved m
    g0 = np.exp(X @ m1 + np.einsum("id,id->i", X, X) / 2)  # gamma at (m1, V0 = I)
    V1 = _T_numpy(X, s, g0)
    np.testing.assert_allclose(recs[1]["mq"].numpy(), X @ m2, rtol=1e-12)
    np.testing.assert_allclose(recs[1]["vq"].numpy(), np.einsum("id,de,ie->i", X, V1, X), rtol=1e-9)


def test_two_cycle_detector():
    t = np.arange(40)[:, None]
    cycle = 0.5 + 0.1 * (-1.0) ** t + 0.05 * 0.5 ** t  # settles into 0.4 / 0.6
    damped = 0.5 + 0.1 * (-0.6) ** t  # oscillating but converging
    monotone = 0.5 + 0.1 * 0.8 ** t
    flat = np.full_like(t, 0.3, dtype=float)
    G = np.hstack([cycle, damped, monotone, flat])
    assert fpdiag.two_cycle_mask(G).tolist() == [True, False, False, False]


def test_generated_wlan_like_problem_does_not_two_cycle_with_exact_site_terms():
    """With exact site terms (the adaptive quadrature, issue 26) FP with m fixed converges on the generated
    wlan-like GLM (rare binary features) as on the dense one: the 953 2-cycling points the 20-node Gauss-Hermite rule
    gave there (docs/reproductions/fp_supp2_smoke) came from its gamma errors at large v (0.062 vs 0.038 at
    m = 3, v = 100), not from the FP operator."""
    from dlm_bench.lgm.optim import optimise

    out = {}
    for name in ("synthetic_wlan:2000:100", "synthetic_logistic:400:20"):
        model, _, _ = fpdiag.model_from_dataset(name)
        res = optimise(model, "fpi", torch.zeros(model.n, dtype=torch.float64), torch.eye(model.n, dtype=torch.float64))
        recs, _ = fpdiag.fp_trace(model, res.m, fpdiag.cov_scaled_identity(model.n, 1.0), 40)
        out[name] = fpdiag.two_cycle_mask(np.stack([r["gamma"].numpy() for r in recs])).sum()
    assert out["synthetic_logistic:400:20"] == 0
    assert out["synthetic_wlan:2000:100"] == 0, out


def test_fixed_gp_hyperparameters_replace_the_estimate():
    """lgm.lengthscale / lgm.outputscale fix the GP prior instead of estimating it: the prior covariance L L^T is the
    RBF kernel sf^2 exp(-|x - x'|^2 / (2 l^2)) of the (z-scored) inputs, computed here with numpy."""
    model, _, hyp = fpdiag.model_from_dataset("synthetic_logistic:60:3", "lgm_gp", outputscale=0.25, lengthscale=1.7)
    assert hyp["outputscale"] == 0.25 and hyp["lengthscale"] == 1.7
    _, _, estimated = fpdiag.model_from_dataset("synthetic_logistic:60:3", "lgm_gp")
    assert estimated["outputscale"] != 0.25  # the default still estimates
    from dlm_bench.lgm import plugin
    from dlm_bench.lgm.fpdiag import synthetic_from_name

    X, _, _ = synthetic_from_name("synthetic_logistic:60:3", 0)
    Z = plugin._zscore(X)
    d2 = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    K = 0.25 * np.exp(-d2 / (2 * 1.7 ** 2))
    L = model.L_S.numpy()
    np.testing.assert_allclose(L @ L.T, K, atol=1e-6)
