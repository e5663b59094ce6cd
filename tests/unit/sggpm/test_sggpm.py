"""Sparse GGPM (Sheth, Wang & Khardon 2015): published objective values, ordinal example, dual and Laplace checks
against independent references (stored upstream objectives, finite differences, scipy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.io
import scipy.optimize
import scipy.special
import torch

from dlm_bench.data.parsers import read_lgm_mat
from dlm_bench.errors import ConfigError
from dlm_bench.gpmath.lgm import Cov
from dlm_bench.lgm.optim import StopRule, optimise
from dlm_bench.sggpm.dual import dual_objective, fit_dual, init_lambda, recover
from dlm_bench.sggpm.fit import fit_method
from dlm_bench.sggpm.laplace import laplace, laplace_mode
from dlm_bench.sggpm.model import Hyp, init_hyps, make_site, sod_model, sparse_model
from dlm_bench.sggpm.optim import train
from dlm_bench.sggpm.protocol import iss, nested_protocol, published_ucsdpeds_splits, zscore_stats

# upstream's stored objective values (sparse_var_inf_ggpm_experiments outputs.zip, spec fp_sggpm_savigp 2.4)
SPARSE_FOLD10 = 8208.705779651731
SOD_FOLD1 = 514.8181266442094


def _peds_fold(shared_data, fold):
    X, y = read_lgm_mat(shared_data / "ucsd_peds1/lgm_fp_inf/glm_test_data_poisson_ucsdpeds.mat")
    order, folds = published_ucsdpeds_splits(shared_data)
    rows = folds[fold - 1].train
    mu, sd = zscore_stats(X[rows])
    return torch.tensor((X[rows] - mu) / sd), torch.tensor(y[rows], dtype=torch.float64)


@pytest.mark.parametrize("method", ["fp_sparse", "dual_sparse"])
def test_published_sparse_objective_fold10(shared_data, method):
    X, y = _peds_fold(shared_data, 10)
    model, fit, hyp = fit_method(method, "count", X, y, 167)
    obj = fit.objective if method.startswith("fp") else -fit.objective  # dual objective = -primal
    assert abs(obj - SPARSE_FOLD10) / SPARSE_FOLD10 <= 1e-8
    assert abs(-fit.vlb - SPARSE_FOLD10) / SPARSE_FOLD10 <= 1e-8  # the recovered (m, V) has the same VLB


@pytest.mark.parametrize("method", ["fp_sod", "grad_sod", "dual_sod"])
def test_published_sod_objective_fold1(shared_data, method):
    X, y = _peds_fold(shared_data, 1)
    _, fit, _ = fit_method(method, "count", X, y, 167)
    obj = -fit.objective if method.startswith("dual") else fit.objective
    assert abs(obj - SOD_FOLD1) / SOD_FOLD1 <= 1e-8


def test_double_log_flag_changes_mean(shared_data):
    X, y = _peds_fold(shared_data, 10)
    Z, yZ = X[-167:], y[-167:].numpy()
    h1, h0 = init_hyps("count", Z, yZ, upstream_mean_double_log=True), init_hyps("count", Z, yZ,
                                                                                 upstream_mean_double_log=False)
    assert h1.mean == pytest.approx(np.log(h0.mean), rel=1e-14)
    my, vy = yZ.mean(), yZ.var(ddof=1)
    sf2 = np.log((vy - my) / my**2 + 1)
    assert h0.sf2 == pytest.approx(sf2) and h0.mean == pytest.approx(np.log(my) - sf2 / 2)
    d = np.sqrt(((Z.numpy()[:, None] - Z.numpy()[None]) ** 2).sum(-1)).max()
    assert h0.ell == pytest.approx(d / 2, rel=1e-12)


def _stocks(shared_data):
    m = scipy.io.loadmat(shared_data / "stock/sparse_var_inf_ggpm/example_ordinal_stocks.mat", squeeze_me=True,
                         struct_as_record=False)
    p, d = m["params"], m["data"]
    hyp = Hyp(float(np.exp(p.hyp.cov[0])), float(np.exp(2 * p.hyp.cov[1])), 0.0, list(p.hyp.lik))
    X = torch.tensor(d.xt, dtype=torch.float64)
    y = torch.tensor(d.yt, dtype=torch.float64)
    Z = torch.tensor(p.var.xpseudo, dtype=torch.float64)
    return sparse_model(X, y, Z, make_site("ordinal", hyp, 20), hyp)


@pytest.mark.slow  # 57-88 s of CPU (make test-slow); kept out of make test's 10 minutes
def test_ordinal_stocks_example(shared_data):
    """FP (Newton-m / FP-V) and joint L-BFGS on (m, L) (the LGM core's GRAD) from the prior (m = 0, V = K_M) reach
    VLB* = -456.68893 with the same mean; the block driver with L-BFGS on L reaches the same VLB."""
    model = _stocks(shared_data)
    m0 = torch.zeros(30, dtype=torch.float64)
    fp = train(model, "fp", m0, Cov.from_chol(model.L_S.clone()))
    lb = optimise(model, "grad", m0, model.L_S.clone(), StopRule(grad_tol=1e-8, f_tol=1e-12, max_iters=3000))
    gr = train(model, "grad", m0, Cov.from_chol(model.L_S.clone()))
    # upstream's -456.68893 integrates the ordinal sites with 20-node Gauss-Hermite; with the exact sites of issue
    # 26 (adaptive quadrature, 1e-9) the optimum is -456.6889411: 1.1e-5 below, GH-20's error on this data set
    for v in (fp.vlb, lb.vlb, gr.vlb):
        assert v == pytest.approx(-456.68893, abs=2e-5)
        assert v == pytest.approx(-456.6889411, abs=5e-7)
    assert float((fp.m - lb.m).abs().max()) <= 1e-6


def _toy(kind="poisson", N=40, M=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(N, 2, generator=g, dtype=torch.float64)
    f = torch.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    if kind == "poisson":
        y = torch.poisson(torch.exp(f + 1.0), generator=g)
        hyp, task = Hyp(1.2, 0.8, 1.0), "count"
    else:
        y = torch.where(torch.rand(N, generator=g, dtype=torch.float64) < torch.sigmoid(2 * f), 1.0, -1.0).double()
        hyp, task = Hyp(1.2, 2.0, 0.0), "binary"
    site = make_site(task, hyp)
    return X, y, hyp, site, sparse_model(X, y, X[:M], site, hyp), sod_model(X[:M], y[:M], site, hyp)


@pytest.mark.parametrize("lik", ["poisson", "logistic"])
@pytest.mark.parametrize("which", ["sparse", "sod"])
def test_dual_gradient_finite_differences(lik, which):
    *_, sp, sod = _toy(lik)
    model = sp if which == "sparse" else sod
    g = torch.Generator().manual_seed(1)
    lam = 0.2 + 0.6 * torch.rand(model.N, generator=g, dtype=torch.float64)
    _, grad = dual_objective(model, lam)
    h = 1e-6
    for i in range(0, model.N, max(1, model.N // 8)):
        e = torch.zeros_like(lam)
        e[i] = h
        fd = (dual_objective(model, lam + e, False)[0] - dual_objective(model, lam - e, False)[0]) / (2 * h)
        assert fd == pytest.approx(float(grad[i]), rel=1e-6, abs=1e-8)


def test_dual_objective_closed_form_numpy():
    """D(lambda) re-derived in numpy with explicit matrices: sum f* + alpha^T m_X + 1/2 alpha^T W K W^T alpha
    - 1/2 lambda^T c - 1/2 log|I + K W^T Lambda W|."""
    X, y, hyp, site, model, _ = _toy("poisson")
    Xn, yn, Z = X.numpy(), y.numpy(), X[:8].numpy()

    def k(A, B):
        d = ((A[:, None] - B[None]) ** 2).sum(-1)
        return hyp.sf2 * np.exp(-0.5 * d / hyp.ell**2)

    K = k(Z, Z) + 1e-7 * np.eye(8)
    W = np.linalg.solve(K, k(Z, Xn)).T
    c = hyp.sf2 - np.einsum("ij,ij->i", W @ K, W)
    lam = np.linspace(0.5, 3.0, len(yn))
    a = yn - lam
    mX = np.full(len(yn), hyp.mean)
    D = (lam * (np.log(lam) - 1)).sum() - scipy.special.gammaln(yn + 1).sum() + a @ mX + 0.5 * a @ W @ K @ W.T @ a \
        - 0.5 * lam @ c - 0.5 * np.linalg.slogdet(np.eye(8) + K @ W.T @ np.diag(lam) @ W)[1]
    assert dual_objective(model, torch.tensor(lam))[0] == pytest.approx(D, rel=1e-10)


def test_dual_equals_minus_primal_toy():
    *_, sp, sod = _toy("poisson")
    for model in (sp, sod):
        fd = fit_dual(model, init_lambda(model))
        m0 = torch.zeros(model.n, dtype=torch.float64) + model.mu
        fp = train(model, "fp", m0, Cov.from_chol(model.L_S.clone()))
        assert -fd.objective == pytest.approx(fp.objective, rel=1e-9)
        m, cov = recover(model, fd.extra["lambda"])
        assert float((m - fp.m).abs().max()) < 1e-5


def test_dual_without_the_upper_bound_is_upstreams_reading():
    """sggpm.dual_upper_bound=false: Poisson (no upper bound) is unchanged to the bit. Logistic: lambda stays in
    (0, 1) (a step beyond 1 finds D = +inf and is backed out of); where the optimum's lambdas are far from 1 both
    readings reach the same D, where some are near 1 (0.93 here) the one-sided reading stalls at once, far above
    it: the paper's dual "convergence failures" on binary data (L211)."""
    *_, sp, _ = _toy("poisson")
    a, b = fit_dual(sp, init_lambda(sp)), fit_dual(sp, init_lambda(sp), upper_bound=False)
    assert torch.equal(a.extra["lambda"], b.extra["lambda"]) and a.objective == b.objective
    for N, M, stalls in ((40, 8, False), (200, 20, True)):
        *_, sp, _ = _toy("logistic", N=N, M=M)
        both, lower = fit_dual(sp, init_lambda(sp)), fit_dual(sp, init_lambda(sp), upper_bound=False)
        lam = lower.extra["lambda"]
        assert bool(((lam > 0) & (lam < 1)).all()) and math.isfinite(lower.objective)
        assert both.reason == "first_order_opt"
        if stalls:
            assert float(both.extra["lambda"].max()) > 0.9 and lower.outer <= 5
            assert lower.objective > both.objective + 100
        else:
            assert lower.objective == pytest.approx(both.objective, abs=1e-8)


@pytest.mark.parametrize("lik", ["poisson", "logistic"])
def test_laplace_mode_matches_scipy_newton(lik):
    """Mode of the exact log posterior by scipy trust-region Newton with a numpy Hessian."""
    *_, sod = _toy(lik, M=15)
    K = (sod.L_S @ sod.L_S.T).numpy()
    mu, y = sod.mu.numpy(), sod.y.numpy()

    def parts(f):
        if lik == "poisson":
            return y * f - np.exp(f), y - np.exp(f), -np.exp(f)
        s = scipy.special.expit(f)
        return -np.logaddexp(0, -y * f), y * scipy.special.expit(-y * f), -s * (1 - s)

    Kinv = np.linalg.inv(K)  # reference only
    fun = lambda f: -(parts(f)[0].sum() - 0.5 * (f - mu) @ Kinv @ (f - mu))
    jac = lambda f: -(parts(f)[1] - Kinv @ (f - mu))
    hess = lambda f: -(np.diag(parts(f)[2]) - Kinv)
    ref = scipy.optimize.minimize(fun, mu.copy(), jac=jac, hess=hess, method="trust-exact", options={"gtol": 1e-10})
    f = laplace_mode(sod).numpy()
    assert np.abs(f - ref.x).max() < 1e-6
    # log q(y) = log p(y|f^) + log N(f^|mu, K) + M/2 log 2 pi - 1/2 log|K^-1 + W|  (numpy)
    _, _, logq = laplace(sod)
    W = -parts(ref.x)[2]
    ll = parts(ref.x)[0].sum() - (scipy.special.gammaln(y + 1).sum() if lik == "poisson" else 0)
    r = ref.x - mu
    ref_logq = ll - 0.5 * r @ Kinv @ r - 0.5 * np.linalg.slogdet(np.eye(15) + np.sqrt(W)[:, None] * K * np.sqrt(W))[1]
    assert logq == pytest.approx(ref_logq, rel=1e-9)


def test_iss_grid_matches_spec():
    assert iss(4000) == [40, 57, 82, 117, 167, 239, 342, 489, 699, 1000]
    assert iss(950) == [10, 15, 24, 36, 56, 85, 131, 201, 309, 475]
    order, folds = nested_protocol(300, [5, 10, 20], seed=1)
    for M, fl in folds.items():
        tests = np.concatenate([f.test for f in fl])
        assert sorted(tests) == sorted(np.setdiff1d(np.arange(300), order[:M]))
        assert all(np.array_equal(f.train[-M:], order[:M]) for f in fl)


def test_unknown_method_is_config_error():
    with pytest.raises(ConfigError):
        fit_method("newton_sparse", "count", torch.zeros(3, 1), torch.zeros(3), 2)
