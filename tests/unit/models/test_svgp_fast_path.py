"""Joint-hyperparameter fast path (models/fast_svgp.py): the whitened SVGP's training-mode q(f) computed over blocks
of the inputs. Loss and gradients (kernel, mean, noise, Z, q(u)) equal GPyTorch's own call (the same bundle with
fast_joint=False), float64, to 1e-10 relative. The RBF cases take the fused kernel path (models/fused_rbf.py, also
tested in test_fused_rbf.py); the Matern case the blocked GPyTorch calls."""

import pytest
import torch

from dlm_bench.models import fast_svgp
from dlm_bench.models.builders import build_bundle
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run.context import seed_everything
from dlm_bench.sweeps.compose import compose_config


def data(n, binary=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g, dtype=torch.float64)
    f = torch.sin(X.sum(-1))
    y = (f > 0).double() if binary else f + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)
    return X, y


def joint_bundle(overrides, X, y, seed=0):
    if not any(o.startswith("dataset=") for o in overrides):
        overrides = ["dataset=boston", *overrides]
    cfg = compose_config(["model.num_inducing=15", "trainer.progress=off", *overrides])
    resolve_task_defaults(cfg)
    seed_everything(seed)
    bundle = build_bundle(cfg, X, y).double()
    bundle.train()
    bundle.fast_joint = False
    bundle.loss(X[:50], y[:50])  # q(u) initialised (to the prior), as on the first training call
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():  # hyperparameters, Z and q(u) = N(m, S) away from their initial values
        for name, p in bundle.named_parameters():
            if "chol_variational_covar" in name:
                p.add_(0.2 * torch.randn(p.shape, generator=g, dtype=p.dtype).tril())
            else:
                p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return bundle


def loss_and_grads(bundle, X, y, fast, block=None, seed=5):
    params = bundle.trainable_parameters()
    torch.manual_seed(seed)  # sampling estimators draw the same eps on both paths
    if fast:
        f = fast_svgp.blocked_whitened_predictive(bundle.model, X, block or fast_svgp.BLOCK)
        loss = -bundle.mll(f, y)
    else:
        bundle.fast_joint = False
        loss = bundle.loss(X, y)
    grads = torch.autograd.grad(loss, params)
    return loss.detach(), grads, params


def assert_equal(bundle, X, y, block):
    ref_loss, ref_g, params = loss_and_grads(bundle, X, y, fast=False)
    loss, g, _ = loss_and_grads(bundle, X, y, fast=True, block=block)
    assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=0), (loss, ref_loss)
    for p, a, b in zip(params, g, ref_g):
        assert a.shape == b.shape
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-10 * b.abs().max().item()), (p.shape, (a - b).abs().max())


CASES = [
    (["objective=elbo", "model.ard=true"], False),  # the peer-benchmark case: whitened ELBO, ARD RBF, Gaussian
    (["objective=dlm"], False),  # log-loss DLM, closed form
    (["objective=elbo", "model.kernel=matern", "model.mean=constant"], False),
    (["objective=dlm", "model.likelihood=student_t"], False),  # quadrature
    (["objective=elbo", "estimator=bmc", "estimator.num_samples=4"], False),
    (["dataset=twonorm", "objective=dlm", "model.likelihood=probit", "model.mean=constant"], True),
    (["objective=elbo", "model.learn_inducing=false"], False),
]


@pytest.mark.parametrize("overrides,binary", CASES)
def test_blocked_predictive_equals_gpytorch_path(overrides, binary):
    X, y = data(300, binary)
    bundle = joint_bundle(overrides, X, y)
    assert fast_svgp.supports_blocked(bundle.model)
    opt = torch.optim.Adam(bundle.trainable_parameters(), lr=0.05)
    for it in range(2):  # and after an Adam step through the fast path
        for block in (64, 100, 1000):  # uneven last block; one block
            assert_equal(bundle, X, y, block)
        opt.zero_grad()
        f = fast_svgp.blocked_whitened_predictive(bundle.model, X, 64)
        (-bundle.mll(f, y)).backward()
        opt.step()


def test_bundle_loss_takes_the_fast_path_at_full_batch():
    n = 2 * fast_svgp.BLOCK + 100
    X, y = data(n)
    bundle = joint_bundle(["objective=elbo", "model.ard=true"], X, y)
    calls = []
    orig = fast_svgp.blocked_whitened_predictive

    def spy(*a, **k):
        calls.append(1)
        return orig(*a, **k)

    fast_svgp.blocked_whitened_predictive = spy
    try:
        bundle.fast_joint = True
        loss = bundle.loss(X, y)
        assert calls == [1]
        bundle.loss(X[:500], y[:500])  # a small (mini)batch: GPyTorch's call
        assert calls == [1]
    finally:
        fast_svgp.blocked_whitened_predictive = orig
    bundle.fast_joint = False
    ref = bundle.loss(X, y)
    assert torch.allclose(loss, ref, rtol=1e-10, atol=0)


def test_unwhitened_and_eval_mode_keep_gpytorch_path():
    X, y = data(200)
    bundle = joint_bundle(["objective=elbo", "model.whiten=false"], X, y)
    assert not fast_svgp.supports_blocked(bundle.model)
