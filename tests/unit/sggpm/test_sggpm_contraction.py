"""FP contraction test (Sheth, Wang & Khardon 2015, Fig. 1): the operator T of eq. 13 against a dense numpy
re-derivation, the Loewner sampling 0 <= U <= K_M, and contraction for count / binary with the RBF kernel."""

import math

import numpy as np
import pytest
import torch
from scipy.special import expit

from dlm_bench.sggpm import contraction as C

ELL = math.sqrt(10) / 3


def np_rbf(A, B, ell, sf2=1.0):
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return sf2 * np.exp(-0.5 * d2 / ell**2)


def np_lambda(lik, y, m, v, nodes=200):
    """lambda_i = E[d^2/df^2 log p(y | f)] = 2 dE/dv, f ~ N(m, v) (paper eq. 11b), by probabilists' Gauss-Hermite."""
    if lik == "count":
        return -np.exp(m + v / 2)
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    f = m[:, None] + np.sqrt(v)[:, None] * x[None, :]
    s = 1 / (1 + np.exp(-f))
    return (-(s * (1 - s))) @ w  # logistic: d^2/df^2 log sigma(y f) = -sigma(f)(1 - sigma(f)), any y = +-1


def instance(lik, M, n=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 10, generator=g, dtype=torch.float64)
    K = np_rbf(X.numpy(), X.numpy(), ELL) + 1e-8 * np.eye(n)
    f = torch.as_tensor(np.linalg.cholesky(K) @ np.random.default_rng(seed).standard_normal(n))
    y = C.simulate_y(lik, f, g)
    op = C.operator(X, X[:M], y, C.make_site(lik), "se", ELL)
    return X, y, op, g


@pytest.mark.parametrize("lik", ["count", "binary"])
def test_T_matches_dense_reference(lik):
    X, y, op, g = instance(lik, 10)
    Xn, Z = X.numpy(), X[:10].numpy()
    KM = np_rbf(Z, Z, ELL) + 1e-7 * np.eye(10)
    KNM = np_rbf(Xn, Z, ELL)
    Ki = np.linalg.inv(KM)
    V = C.loewner_sample(op.L_M, g).numpy()
    D = KNM @ Ki
    m = np.zeros(len(Xn))
    v = 1.0 - np.einsum("ij,jk,ik->i", KNM, Ki, KNM) + np.einsum("ij,jk,ik->i", D, V, D)
    lam = np_lambda(lik, y.numpy(), m, v)
    T_ref = np.linalg.inv(Ki - Ki @ KNM.T @ np.diag(lam) @ KNM @ Ki)
    T = C.T(op, torch.as_tensor(V)).numpy()
    assert np.abs(T - T_ref).max() <= 1e-7 * np.abs(T_ref).max()


@pytest.mark.parametrize("M", [5, 10, 50])
def test_loewner_sample_between_zero_and_KM(M):
    g = torch.Generator().manual_seed(M)
    Z = torch.rand(M, 10, generator=g, dtype=torch.float64)
    KM = np_rbf(Z.numpy(), Z.numpy(), ELL) + 1e-7 * np.eye(M)
    L = torch.as_tensor(np.linalg.cholesky(KM))
    for _ in range(10):
        U = C.loewner_sample(L, g).numpy()
        assert np.allclose(U, U.T)
        tol = 1e-10 * np.linalg.eigvalsh(KM).max()
        assert np.linalg.eigvalsh(U).min() >= -tol
        assert np.linalg.eigvalsh(KM - U).min() >= -tol


def test_haar_orthogonal():
    Q = C.haar_orthogonal(7, torch.Generator().manual_seed(3)).numpy()
    assert np.abs(Q.T @ Q - np.eye(7)).max() < 1e-12


@pytest.mark.parametrize("lik", ["count", "binary"])
@pytest.mark.parametrize("M", [5, 10])
def test_rbf_contraction_count_binary(lik, M):
    for seed in range(3):
        _, _, op, g = instance(lik, M, seed=seed)
        for _ in range(5):
            du, dt = C.pair_ratio(op, g)
            assert dt <= du * (1 + 1e-9)


def test_ordinal_simulation_levels():
    g = torch.Generator().manual_seed(0)
    f = torch.linspace(-3, 3, 4001, dtype=torch.float64)
    y = C.simulate_y("ordinal", f, g)
    assert set(y.unique().tolist()) == {1.0, 2.0, 3.0, 4.0, 5.0}
    # slope 50: far from the thresholds the level is (almost) deterministic
    th = np.array(C.ORDINAL_THRESHOLDS)
    far = np.abs(f.numpy()[:, None] - th[None, :]).min(1) > 0.3
    expect = 1 + (f.numpy()[:, None] > th[None, :]).sum(1)
    assert (y.numpy()[far] == expect[far]).all()


def np_ordinal_lambda(y, m, v, th, slope, num=40001):
    """E[d^2/df^2 log p(y | f)], cumulative logit: -s^2 [sig(a)(1 - sig(a)) + sig(b)(1 - sig(b))],
    a = s (theta_{y-1} - f), b = s (theta_y - f); trapezoid rule on a dense grid over m +- 14 sd (Gauss-Hermite,
    even with 180 nodes, is off by up to 0.7 here: at slope 50 the integrand has features of width 0.02)."""
    t = np.concatenate([[-np.inf], th, [np.inf]])
    sd = np.sqrt(v)
    f = m[:, None] + sd[:, None] * np.linspace(-14, 14, num)[None, :]
    q = np.exp(-0.5 * (f - m[:, None]) ** 2 / v[:, None]) / np.sqrt(2 * np.pi * v[:, None])
    k = y.astype(int)
    a, b = slope * (t[k - 1][:, None] - f), slope * (t[k][:, None] - f)
    sa, sb = expit(a), expit(b)
    return np.trapezoid(q * (-slope**2 * (sa * (1 - sa) + sb * (1 - sb))), f, axis=1)


def test_ordinal_not_a_contraction_at_M5():
    """The paper's claim (ordinal, small M) shows with the data on the active set and m at the Newton mode (about 2 %
    of pairs at M = 5; docs/sggpm.md): seed 33 is one such instance. The ratio is re-derived in numpy with a
    dense-grid quadrature (so it is no quadrature artefact)."""
    keep = []
    row = C.run(reps=1, n=5, sizes=(5,), likelihoods=("ordinal",), kernels=("se",), m_at="mode", data="active",
                seed=33, keep=keep)[0]
    assert row[5] / row[4] > 1.2
    op, m, U, V = keep[0]
    K = (op.L_M @ op.L_M.T).numpy()
    Ki = np.linalg.inv(K)
    th, y = np.array(C.ORDINAL_THRESHOLDS), op.y.numpy()

    def T(S):
        lam = np_ordinal_lambda(y, m.numpy(), np.diag(S), th, C.ORDINAL_SLOPE)
        return np.linalg.inv(Ki - np.diag(lam))

    U, V = U.numpy(), V.numpy()
    ratio = np.linalg.norm(T(U) - T(V), 2) / np.linalg.norm(U - V, 2)
    assert ratio > 1.2
    # and m is the mode: the m-gradient of the VLB at V = K_M vanishes (D = K_NM K_M^-1 carries the jitter)
    D = op.D.numpy()
    vq = op.c.numpy() + np.einsum("ij,jk,ik->i", D, K, D)
    rho = op.site.site_expectations(op.y, op.a + op.D @ m, torch.as_tensor(vq).clamp_min(1e-12))[1].numpy()
    assert np.abs(D.T @ rho - Ki @ (m.numpy() - op.mu.numpy())).max() < 1e-4  # Newton with the Stein lambda


@pytest.mark.parametrize("sf2", [1.0, 0.04])
def test_poly_sf2_scales_the_polynomial_prior(sf2):
    """poly_sf2 is the polynomial kernel's sf^2: the operator's K_M = L L^T is sf2 (x'z / ell^2 + 1)^2 of the active
    inputs (numpy, up to the jitter), and the other kernels keep sf2 = 1."""
    keep = []
    C.run(reps=1, n=8, sizes=(5,), likelihoods=("binary",), kernels=("poly2", "se"), seed=3, keep=keep, poly_sf2=sf2)
    (op_poly, *_), (op_se, *_) = keep
    gen = torch.Generator().manual_seed(3)
    X = torch.rand(8, 10, generator=gen, dtype=torch.float64).numpy()[:5]
    K_poly = sf2 * (X @ X.T / ELL**2 + 1.0) ** 2
    np.testing.assert_allclose((op_poly.L_M @ op_poly.L_M.T).numpy(), K_poly, rtol=1e-6, atol=1e-6 * sf2)
    np.testing.assert_allclose((op_se.L_M @ op_se.L_M.T).numpy(), np_rbf(X, X, ELL), atol=1e-6)
