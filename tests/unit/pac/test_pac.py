"""PAC-GP building blocks (dlm_bench/pac, models/pac_gp.py, models/exact.py) against independent references:
scipy's brentq for kl^{-1}, finite differences for its gradients, Monte Carlo for the Gibbs risks, a generic
dense Gaussian KL in numpy for eqs. (8) and (10)."""

import math

import gpytorch
import numpy as np
import pytest
import torch
from scipy.optimize import brentq

from dlm_bench.config.schema import Kernel, PacConfig, PacLoss, SparseQ
from dlm_bench.models import collapsed
from dlm_bench.models.components import make_kernel
from dlm_bench.models.exact import ExactGPBundle
from dlm_bench.models.pac_gp import PacGPBundle, PacSGPBundle
from dlm_bench.pac import (
    binary_kl,
    bound_kl,
    bound_pinsker,
    gibbs_risk,
    kl_collapsed,
    kl_full_gp,
    kl_inverse,
    kl_sparse,
    log_theta_size,
    pointwise_loss,
    round_to_grid,
)
from dlm_bench.pac.evaluation import pac_metrics, round_kernel_
from tests import reference as ref
from tests.gradcheck import assert_grads_match_finite_differences

QS = [0.0, 1e-6, 1e-3, 0.05, 0.2, 0.5, 0.8, 0.97, 1 - 1e-6, 1.0]
EPSS = [0.0, 1e-8, 1e-4, 0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 50.0, math.inf]


def kl_np(q, p):
    a = q * math.log(q / p) if q > 0 else 0.0
    b = (1 - q) * math.log((1 - q) / (1 - p)) if q < 1 else 0.0
    return a + b


def kl_inverse_brentq(q, eps):
    if q == 1.0 or math.isinf(eps):
        return 1.0
    if eps == 0.0:
        return q
    hi = 1.0 - 1e-16
    if kl_np(q, hi) <= eps:  # the root is within 1e-16 of 1
        return 1.0
    return brentq(lambda p: kl_np(q, p) - eps, q, hi, xtol=1e-15, rtol=1e-15, maxiter=500)


def test_kl_inverse_matches_brentq_on_a_grid():
    q = torch.tensor(QS, dtype=torch.float64)[:, None]
    e = torch.tensor(EPSS, dtype=torch.float64)[None, :]
    got = kl_inverse(q, e)
    assert got.shape == (len(QS), len(EPSS))
    for i, qi in enumerate(QS):
        for j, ej in enumerate(EPSS):
            want = kl_inverse_brentq(qi, ej)
            assert abs(got[i, j].item() - want) <= 1e-9, (qi, ej, got[i, j].item(), want)


def test_kl_inverse_special_values():
    e = torch.tensor([0.0, 0.3, 2.0, math.inf], dtype=torch.float64)
    assert torch.allclose(kl_inverse(torch.zeros(4, dtype=torch.float64), e), -torch.expm1(-e), atol=1e-15)
    assert torch.equal(kl_inverse(torch.ones(4, dtype=torch.float64), e), torch.ones(4, dtype=torch.float64))
    q = torch.tensor([0.0, 0.3, 0.9, 1.0], dtype=torch.float64)
    assert torch.equal(kl_inverse(q, torch.zeros(4, dtype=torch.float64)), q)
    assert torch.equal(kl_inverse(q, torch.full((4,), math.inf, dtype=torch.float64)), torch.ones(4, dtype=torch.float64))
    # it is the root: kl(q || p) = eps in the interior, and Pinsker: p <= q + sqrt(eps/2)
    q = torch.rand(200, dtype=torch.float64) * 0.98 + 0.01
    e = torch.rand(200, dtype=torch.float64) * 0.5 + 1e-3
    p = kl_inverse(q, e)
    # bracketed within 1e-12 in p (kl is too steep near p = 1 to compare kl values themselves)
    assert (binary_kl(q, p - 1e-12) <= e).all() and (binary_kl(q, (p + 1e-12).clamp(max=1.0)) >= e).all()
    assert (p >= q).all() and (p <= q + torch.sqrt(e / 2) + 1e-12).all()
    with pytest.raises(ValueError):
        kl_inverse(torch.tensor(1.5), torch.tensor(0.1))
    with pytest.raises(ValueError):
        kl_inverse(torch.tensor(0.5), torch.tensor(-0.1))


@pytest.mark.parametrize("q,eps", [(0.3, 0.05), (0.01, 0.2), (0.7, 1.5), (0.5, 1e-3), (1e-4, 0.02), (0.95, 0.01)])
def test_kl_inverse_gradients_match_finite_differences(q, eps):
    qt = torch.tensor(q, dtype=torch.float64, requires_grad=True)
    et = torch.tensor(eps, dtype=torch.float64, requires_grad=True)
    kl_inverse(qt, et).backward()
    h = 1e-6 * min(q, 1 - q, eps, 1.0)
    f = lambda a, b: kl_inverse(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)).item()
    fd_q = (f(q + h, eps) - f(q - h, eps)) / (2 * h)
    fd_e = (f(q, eps + h) - f(q, eps - h)) / (2 * h)
    assert qt.grad.item() == pytest.approx(fd_q, rel=1e-5)
    assert et.grad.item() == pytest.approx(fd_e, rel=1e-5)


def test_kl_inverse_gradients_at_the_edges_are_finite():
    q = torch.tensor([0.0, 1.0, 0.4, 0.4, 0.0], dtype=torch.float64, requires_grad=True)
    e = torch.tensor([0.3, 0.3, math.inf, 0.0, 0.0], dtype=torch.float64, requires_grad=True)
    kl_inverse(q, e).sum().backward()
    assert torch.isfinite(q.grad).all() and torch.isfinite(e.grad).all()
    # q = 0: p = 1 - exp(-eps), dp/deps = exp(-eps); q = 1 and eps = inf: p = 1 is constant
    assert e.grad[0].item() == pytest.approx(math.exp(-0.3), rel=1e-9)
    assert q.grad[1].item() == 0.0 and e.grad[1].item() == 0.0 and q.grad[2].item() == 0.0
    assert q.grad[3].item() == 1.0  # eps = 0: p = q


def test_kl_inverse_is_batched_and_keeps_float32():
    q = torch.rand(3, 4, 5)
    e = torch.rand(5) * 0.3
    p = kl_inverse(q, e)
    assert p.shape == (3, 4, 5) and p.dtype == torch.float32


MC_CASES = [  # y, mean, var, eps
    (0.3, 0.1, 0.04, 0.6), (1.5, -0.2, 0.5, 0.4), (-0.7, -0.65, 1e-3, 0.2), (0.0, 2.0, 2.0, 1.0), (2.0, 1.7, 0.1, 0.25),
]


@pytest.mark.parametrize("loss", [v.value for v in PacLoss])
def test_gibbs_risk_matches_monte_carlo(loss):
    gen = torch.Generator().manual_seed(0)
    n = 400_000
    for y, m, v, eps in MC_CASES:
        f = m + math.sqrt(v) * torch.randn(n, generator=gen, dtype=torch.float64)
        vals = pointwise_loss(loss, torch.tensor(y, dtype=torch.float64), f, eps)
        mc, se = vals.mean().item(), vals.std().item() / math.sqrt(n)
        exact = gibbs_risk(loss, torch.tensor([y], dtype=torch.float64), torch.tensor([m], dtype=torch.float64),
                           torch.tensor([v], dtype=torch.float64), eps).item()
        assert abs(exact - mc) <= 5 * se + 1e-6, (loss, y, m, v, eps, exact, mc, se)
        assert 0.0 <= exact <= 1.0


def test_gibbs_risk_deterministic_limit_and_gradient():
    y = torch.tensor([0.0, 1.0, -1.0], dtype=torch.float64)
    m = torch.tensor([0.5, 0.2, -1.05], dtype=torch.float64)
    for loss in ("zero_one", "clipped_square", "exp"):
        got = gibbs_risk(loss, y, m, torch.zeros(3, dtype=torch.float64), 0.6)
        assert torch.allclose(got, pointwise_loss(loss, y, m, 0.6), atol=1e-12)
    mm = m.clone().requires_grad_(True)
    vv = torch.full((3,), 0.3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: gibbs_risk("clipped_square", y, a, b, 0.6), (mm, vv))
    assert torch.autograd.gradcheck(lambda a, b: gibbs_risk("zero_one", y, a, b, 0.6), (mm, vv))


def test_pinsker_bound_dominates_and_bound_dominates_the_risk():
    risk = torch.linspace(0, 1, 41, dtype=torch.float64)[:, None]
    kl = torch.tensor([0.0, 0.1, 1.0, 10.0, 100.0, 1e4], dtype=torch.float64)[None, :]
    for n in (10, 405, 40000):
        b = bound_kl(risk, kl, n, log_theta_size(2), 0.01)
        bp = bound_pinsker(risk, kl, n, log_theta_size(2), 0.01)
        assert (bp >= b - 1e-12).all() and (b >= risk - 1e-12).all() and (b <= 1).all()


def test_hyperparameter_grid():
    assert log_theta_size(2) == pytest.approx(2 * math.log(1201))
    assert log_theta_size(14, 6, 1200) == pytest.approx(14 * 7.0909, rel=1e-4)
    x = torch.tensor([-7.0, -6.0, -0.004, 0.006, 1.234, 5.999, 9.0], dtype=torch.float64)
    assert torch.allclose(round_to_grid(x), torch.tensor([-6.0, -6.0, 0.0, 0.01, 1.23, 6.0, 6.0], dtype=torch.float64))
    assert torch.allclose(round_to_grid(torch.tensor([0.4, -0.6]), 1.0, 2), torch.tensor([0.0, -1.0]))


def _kernel(seed, d=2, ard=False):
    rng = np.random.default_rng(seed)
    k = make_kernel(Kernel.rbf, d if ard else None).double()
    k.base_kernel.lengthscale = torch.tensor(rng.uniform(0.5, 1.5, size=(1, d if ard else 1)))
    k.outputscale = rng.uniform(0.5, 2.0)
    return k, rng


def _data(rng, n=40, d=2):
    X = torch.as_tensor(rng.normal(size=(n, d)))
    y = torch.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.2 * torch.as_tensor(rng.normal(size=n))
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_full_gp_kl_eq8_matches_generic_gaussian_kl(seed):
    k, rng = _kernel(seed)
    X, y = _data(rng)
    noise = rng.uniform(0.05, 0.5)
    K = k(X).to_dense().detach().numpy()
    C = K + noise * np.eye(len(K))
    mq = K @ np.linalg.solve(C, y.numpy())
    Sq = K - K @ np.linalg.solve(C, K)
    want = ref.gauss_kl(mq, Sq, K)
    got = kl_full_gp(torch.as_tensor(K), torch.tensor(noise, dtype=torch.float64), y).item()
    assert got == pytest.approx(want, rel=1e-6)
    lik = gpytorch.likelihoods.GaussianLikelihood().double()
    lik.noise = noise
    b = PacGPBundle(k, lik, X, y, PacConfig(), "pac_kl")
    assert b.pac_kl().item() == pytest.approx(want, rel=1e-6)
    e = ExactGPBundle(k, lik, X, y).double()
    assert e.pac_kl().item() == pytest.approx(want, rel=1e-6)
    # Q's marginals at the training inputs (used by the training loss) = those of predict_f = the GP posterior
    m, v = b.predict_f(X)
    assert np.allclose(m.numpy(), mq, atol=1e-8) and np.allclose(v.numpy(), np.diag(Sq), atol=1e-8)
    me, ve = e.predict_f(X)
    assert np.allclose(me.numpy(), mq, atol=1e-6) and np.allclose(ve.numpy(), np.diag(Sq), atol=1e-5)


@pytest.mark.parametrize("alpha", [1.0, 0.0])
def test_sparse_kl_eq10_matches_generic_gaussian_kl(alpha):
    k, rng = _kernel(3, ard=True)
    X, y = _data(rng)
    Z = torch.as_tensor(rng.normal(size=(7, 2)))
    noise = torch.tensor(0.1, dtype=torch.float64)
    Kuu = k(Z).to_dense().detach()
    jitter = collapsed.default_jitter(Kuu)
    t = collapsed.collapsed_terms(Kuu, k(Z, X).to_dense().detach(), k(X, diag=True).detach(), noise, y, alpha, jitter)
    a, R = collapsed.q_u(t)
    Kj = (Kuu + jitter * torch.eye(7, dtype=torch.float64)).numpy()
    want = ref.gauss_kl(a.numpy(), (R @ R.T).numpy(), Kj)
    assert kl_collapsed(t).item() == pytest.approx(want, rel=1e-6)
    # free form: random a, lower-triangular L_B
    aa = torch.as_tensor(rng.normal(size=7))
    Lb = torch.tril(torch.as_tensor(rng.normal(size=(7, 7)))) * 0.3 + torch.eye(7, dtype=torch.float64) * 0.5
    want = ref.gauss_kl(aa.numpy(), (Lb @ Lb.T).numpy(), Kj)
    assert kl_sparse(torch.linalg.cholesky(torch.as_tensor(Kj)), aa, Lb).item() == pytest.approx(want, rel=1e-6)


def _sgp(q, seed=4):
    k, rng = _kernel(seed)
    X, y = _data(rng)
    lik = gpytorch.likelihoods.GaussianLikelihood().double()
    lik.noise = 0.2
    Z = X[:6].clone()
    return PacSGPBundle(k, Z, lik, X, y, PacConfig(sparse_q=q), "pac_kl"), X, y


@pytest.mark.parametrize("q", [SparseQ.fitc, SparseQ.vfe, SparseQ.free])
def test_pac_sgp_loss_is_the_bound_and_has_exact_gradients(q):
    b, X, y = _sgp(q)
    with torch.no_grad():
        m, v = b.predict_f(X)
        risk = gibbs_risk("zero_one", y, m, v, 0.6).mean()
        want = bound_kl(risk, b.pac_kl(), len(y), log_theta_size(2), 0.01)
    assert b.loss(X, y).item() == pytest.approx(want.item(), rel=1e-10)
    assert_grads_match_finite_differences(lambda: b.loss(X, y), b.trainable_parameters(), rtol=1e-4, atol=1e-8)
    if q is SparseQ.free:  # starts at the FITC q(u), so the two KLs agree before training
        f, _, _ = _sgp(SparseQ.fitc)
        assert b.pac_kl().item() == pytest.approx(f.pac_kl().item(), rel=1e-6)
        assert b.noise is None


def test_pac_gp_loss_gradients_match_finite_differences():
    k, rng = _kernel(5, ard=True)
    X, y = _data(rng, n=30)
    lik = gpytorch.likelihoods.GaussianLikelihood().double()
    lik.noise = 0.3
    for objective in ("pac_kl", "pac_sqrt"):
        b = PacGPBundle(k, lik, X, y, PacConfig(loss=PacLoss.exp), objective)
        assert_grads_match_finite_differences(lambda: b.loss(X, y), b.trainable_parameters(), rtol=1e-4, atol=1e-8)


def test_rounding_and_pac_metrics():
    k, rng = _kernel(6, ard=True)
    X, y = _data(rng)
    lik = gpytorch.likelihoods.GaussianLikelihood().double()
    lik.noise = 0.3
    b = PacGPBundle(k, lik, X, y, PacConfig(), "pac_kl")
    out = pac_metrics(b, PacConfig(), X, y, X[:10], y[:10])
    r = torch.cat([2 * k.base_kernel.lengthscale.log().reshape(-1), k.outputscale.log().reshape(-1)]).detach()
    assert torch.allclose(r * 100, torch.round(r * 100), atol=1e-8)  # two decimals after rounding
    assert out["log_theta"] == pytest.approx(3 * math.log(1201))
    assert out["gibbs_train"] <= out["bound"] <= out["bound_pinsker"]
    assert set(out) == {"bound", "bound_pinsker", "gibbs_train", "gibbs_test", "kl_over_n", "log_theta"}
    again = round_kernel_(k, 6.0, 1200)
    assert torch.allclose(again, r, atol=1e-12)  # idempotent


def test_lbfgs_trainer_minimises_and_survives_failing_trial_points():
    from dlm_bench.training.trainer import Trainer

    w = torch.nn.Parameter(torch.tensor([3.0, -2.0], dtype=torch.float64))
    X, y = torch.zeros(4, 1, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)

    failures = []

    def loss(_X, _y):  # a Cholesky failure far from the optimum (a bad line-search trial) must not end the run
        if w.abs().max() > 20:
            failures.append(1)
            torch.linalg.cholesky(-torch.eye(2, dtype=torch.float64))
        return ((w - torch.tensor([1.0, 0.5], dtype=torch.float64)) ** 2).sum() * 10

    # lr=100: the first trial step lands far outside, where the loss fails
    res = Trainer(optimizer="lbfgs", lr=100.0, max_iters=50, window=3, tol=1e-12).fit(loss, [w], X, y)
    assert failures and res.status == "ok" and res.iterations < 50
    assert torch.allclose(w.detach(), torch.tensor([1.0, 0.5], dtype=torch.float64), atol=1e-6)
    with pytest.raises(ValueError, match="full batch"):
        Trainer(optimizer="lbfgs", batch_size=2)


def test_round_digits_sets_the_grid_like_app_f():
    from dlm_bench.pac.bound import grid_points

    assert grid_points(PacConfig()) == 1200
    assert grid_points(PacConfig(grid_L=1.0, round_digits=0)) == 2  # ln theta in {-1, 0, 1}
    assert grid_points(PacConfig(grid_L=6.0, round_digits=2)) == 1200
    assert log_theta_size(4, 1.0, grid_points(PacConfig(grid_L=1.0, round_digits=0))) == pytest.approx(4 * math.log(3))


def test_gp_synthetic_generator_is_seeded(monkeypatch):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "scripts" / "make_gp_synthetic.py"
    monkeypatch.syspath_prepend(str(path.parent))  # the script imports its sibling entry.py
    spec = importlib.util.spec_from_file_location("make_gp_synthetic", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    X, y, ls = mod.gp_synthetic(500, 3, seed=1)
    X2, y2, _ = mod.gp_synthetic(500, 3, seed=1)
    assert X.shape == (500, 3) and np.array_equal(y, y2) and (np.abs(X) <= 3).all()
    assert (np.abs(np.log(ls)) <= 1).all() and 0.5 < y.var() < 2.0  # unit signal variance + 0.01 noise
