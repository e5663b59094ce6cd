"""models/fused_rbf.py, the fused RBF paths of the SVGP and SGPR training losses (issue 57), against independent
references: the block substitution against LAPACK's triangular solve; each hand-written backward against finite
differences (torch.autograd.gradcheck); the losses and all their gradients against the plain GPyTorch / collapsed.py
path (fast paths off) to 1e-9 relative, float64, also with nearly coincident inducing points (K_ZZ ill-conditioned)."""

import pytest
import torch

from dlm_bench.models import collapsed, fast_svgp, fused_rbf
from dlm_bench.models.builders import build_bundle
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run.context import seed_everything
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.training import gpytorch_internals

D64 = torch.float64


def lower(M, seed=0):
    g = torch.Generator().manual_seed(seed)
    B = torch.randn(M, M, generator=g, dtype=D64)
    return torch.linalg.cholesky(B @ B.T + 0.5 * M * torch.eye(M, dtype=D64))


@pytest.mark.parametrize("M", [1, 5, 32, 45, 100])
def test_blocked_lower_equals_lapack_solve(M):
    L = lower(M)
    g = torch.Generator().manual_seed(1)
    K = torch.randn(M, 70, generator=g, dtype=D64)
    tri = fused_rbf.BlockedLower(L)
    ref = torch.linalg.solve_triangular(L, K, upper=False)
    assert torch.allclose(tri.solve(K), ref, rtol=1e-12, atol=1e-12 * ref.abs().max().item())
    assert torch.allclose(tri.solve(K.T.contiguous().T), ref, rtol=1e-12, atol=1e-12 * ref.abs().max().item())


def small_inputs(ard, seed=0, N=9, M=4, D=3):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(N, D, generator=g, dtype=D64)
    Z = torch.randn(M, D, generator=g, dtype=D64).requires_grad_()
    ls = (0.8 + torch.rand(1, D if ard else 1, generator=g, dtype=D64)).requires_grad_()
    os_ = torch.tensor(1.3, dtype=D64, requires_grad=True)
    Lraw = (lower(M, seed) / 3).requires_grad_()
    return g, X, Z, ls, os_, Lraw


@pytest.mark.parametrize("ard", [True, False])
def test_whitened_predictive_backward_matches_finite_differences(ard):
    g, X, Z, ls, os_, Lraw = small_inputs(ard)
    M = Z.shape[0]
    Mraw = (0.3 * torch.randn(M, M, generator=g, dtype=D64)).requires_grad_()
    m = torch.randn(M, generator=g, dtype=D64).requires_grad_()

    def f(Z, ls, os_, Lraw, Mraw, m):  # middle = S - I is symmetric, as in the strategy
        return fused_rbf.WhitenedRBFPredictive.apply(X, Z, ls, os_, Lraw.tril(), Mraw + Mraw.T, m, 4)

    assert torch.autograd.gradcheck(f, (Z, ls, os_, Lraw, Mraw, m), eps=1e-6, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("ard", [True, False])
def test_collapsed_stats_backward_matches_finite_differences(ard):
    g, X, Z, ls, os_, Lraw = small_inputs(ard, seed=3)
    y = torch.randn(X.shape[0], generator=g, dtype=D64)

    def f(Z, ls, os_, Lraw):
        return fused_rbf.CollapsedRBFStats.apply(X, Z, ls, os_, Lraw.tril(), y, 4)

    assert torch.autograd.gradcheck(f, (Z, ls, os_, Lraw), eps=1e-6, atol=1e-7, rtol=1e-6)


def data(n, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=D64)
    return X, torch.sin(X.sum(-1)) + 0.1 * torch.randn(n, generator=g, dtype=D64)


def bundle(overrides, X, y, m=30):
    cfg = compose_config(["dataset=boston", f"model.num_inducing={m}", "trainer.progress=off", *overrides])
    resolve_task_defaults(cfg)
    seed_everything(0)
    b = build_bundle(cfg, X, y).double()
    b.train()
    return b


def nearly_coincident(X, m, seed=0):
    """m inducing inputs: m // 2 training points and each again moved by 1e-4 (K_ZZ nearly singular)."""
    g = torch.Generator().manual_seed(seed)
    base = X[torch.randperm(X.shape[0], generator=g)[: m // 2]]
    return torch.cat([base, base + 1e-4 * torch.randn(base.shape, generator=g, dtype=D64)])


def assert_close(a, b, rtol=1e-9):
    assert a.shape == b.shape
    assert torch.allclose(a, b, rtol=rtol, atol=rtol * b.abs().max().item()), (a - b).abs().max()


@pytest.mark.parametrize("overrides,coincident", [
    (["objective=elbo", "model.ard=true"], False),  # the peer-benchmark case
    (["objective=elbo", "model.ard=true"], True),
    (["objective=dlm", "model.ard=false", "model.mean=constant"], False),
])
def test_svgp_fused_loss_equals_gpytorch_path(overrides, coincident):
    X, y = data(700)
    b = bundle(overrides, X, y)
    b.fast_joint = False
    b.loss(X[:50], y[:50])  # q(u) initialised, as on the first training call
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        Z = b.model.variational_strategy.inducing_points
        Z.copy_(nearly_coincident(X, Z.shape[0]) if coincident else X[:Z.shape[0]])  # coincident: Z within X
        for name, p in b.named_parameters():
            if "inducing_points" not in name:
                p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype))
        gpytorch_internals.q_u_module(b.model.variational_strategy).chol_variational_covar.tril_()
    assert fused_rbf.supports_fused_rbf(b.model.covar_module, Z, X)
    params = b.trainable_parameters()
    ref = b.loss(X, y)
    ref_g = torch.autograd.grad(ref, params)
    loss = -b.mll(fast_svgp.blocked_whitened_predictive(b.model, X, block=256), y)
    grads = torch.autograd.grad(loss, params)
    assert_close(loss.detach(), ref.detach(), rtol=1e-10)
    for a, r in zip(grads, ref_g):
        assert_close(a, r)


@pytest.mark.parametrize("ard,coincident", [(True, False), (True, True), (False, False)])
def test_sgpr_fused_loss_equals_plain_loss(ard, coincident):
    X, y = data(600, seed=1)
    b = bundle(["model=sgpr", f"model.ard={str(ard).lower()}"], X, y)
    with torch.no_grad():
        b.Z.copy_(nearly_coincident(X, b.Z.shape[0], seed=1) if coincident else b.Z)
        b.kernel.base_kernel.lengthscale = 1.7
    b.BLOCK = 128  # five blocks and an uneven last one
    opt = torch.optim.Adam(b.trainable_parameters(), lr=0.05)
    for _ in range(2):  # and after an Adam step through the fused path
        b.fast = False
        ref = b.loss(X, y)
        ref_g = torch.autograd.grad(ref, b.trainable_parameters())
        b.fast = True
        loss = b.fused_vfe(X, y) / X.shape[0]
        assert_close(b.loss(X, y).detach(), loss.detach(), rtol=0)  # loss() takes the fused path here
        grads = torch.autograd.grad(loss, b.trainable_parameters())
        assert_close(loss.detach(), ref.detach(), rtol=1e-10)
        for a, r in zip(grads, ref_g):
            assert_close(a, r)
        opt.zero_grad()
        b.loss(X, y).backward()
        opt.step()


@pytest.mark.parametrize("ard,coincident", [(True, False), (True, True), (False, False)])
def test_sq_dlm_fused_loss_equals_plain_loss(ard, coincident):
    """Square-loss DLM (models/sq_dlm.py) takes the same statistics P, A y as SGPR: loss and every gradient equal
    the plain sq_dlm_solve path, also after Adam steps through the fused one."""
    X, y = data(600, seed=4)
    b = bundle(["objective=sq_dlm", f"model.ard={str(ard).lower()}", "objective.beta=0.3"], X, y)
    assert type(b).__name__ == "SqDLMBundle"
    with torch.no_grad():
        b.Z.copy_(nearly_coincident(X, b.Z.shape[0], seed=4) if coincident else b.Z)
        b.kernel.base_kernel.lengthscale = 1.3
    assert fused_rbf.supports_fused_rbf(b.kernel, b.Z, X)
    opt = torch.optim.Adam(b.trainable_parameters(), lr=0.05)
    for _ in range(2):
        b.fast = False
        ref = b.loss(X, y)
        ref_g = torch.autograd.grad(ref, b.trainable_parameters())
        b.fast = True
        loss = b.loss(X, y)
        grads = torch.autograd.grad(loss, b.trainable_parameters())
        assert_close(loss.detach(), ref.detach(), rtol=1e-10)
        assert_close(loss.detach(), b.fused_loss(X, y).detach() / X.shape[0], rtol=0)  # loss() took the fused path
        for a, r in zip(grads, ref_g):
            assert_close(a, r)
        opt.zero_grad()
        b.loss(X, y).backward()
        opt.step()


def test_vfe_from_stats_equals_neg_log_marginal():
    X, y = data(200, seed=2)
    b = bundle(["model=sgpr", "model.ard=true"], X, y, m=15)
    with torch.no_grad():
        t = b.terms(X, y)
        A = torch.linalg.solve_triangular(t.L, b.kernel(b.Z, X).to_dense(), upper=False)
        f0 = collapsed.vfe_from_stats(A @ A.T, A @ y, b.kernel(X, diag=True).sum(), y.square().sum(), b.noise,
                                      X.shape[0])
        assert_close(f0, collapsed.neg_log_marginal(t), rtol=1e-12)


def test_fused_scope():
    X, y = data(100)
    for overrides in (["model.kernel=matern"],):
        b = bundle(["objective=elbo", *overrides], X, y)
        assert not fused_rbf.supports_fused_rbf(b.model.covar_module, b.model.variational_strategy.inducing_points, X)
    b = bundle(["objective=elbo"], X, y)
    Z = b.model.variational_strategy.inducing_points
    assert fused_rbf.supports_fused_rbf(b.model.covar_module, Z, X)
    assert not fused_rbf.supports_fused_rbf(b.model.covar_module, Z, X.clone().requires_grad_())
    assert not fused_rbf.supports_fused_rbf(b.model.covar_module, Z.unsqueeze(0), X)
