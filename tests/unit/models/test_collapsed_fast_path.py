"""Collapsed SGPR / FITC training loss over blocks of the points (models/collapsed.py collapsed_terms_blocked,
models/sgpr.py CollapsedBundle.blocked_terms): loss and gradients (kernel, noise, Z) equal the all-at-once
computation (fast=False), float64, to 1e-10 relative."""

import pytest
import torch

from dlm_bench.models import collapsed
from dlm_bench.models.builders import build_bundle
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run.context import seed_everything
from dlm_bench.sweeps.compose import compose_config


def bundle_and_data(model, n=300, seed=0, extra=()):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = torch.sin(X.sum(-1)) + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)
    cfg = compose_config(["dataset=boston", f"model={model}", "model.num_inducing=25", "model.ard=true",
                          "trainer.progress=off", *extra])
    resolve_task_defaults(cfg)
    seed_everything(seed)
    bundle = build_bundle(cfg, X, y).double()
    with torch.no_grad():  # hyperparameters and Z away from their initial values
        for p in bundle.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    bundle.train()
    return bundle, X, y


def loss_and_grads(bundle, X, y, fast):
    bundle.fast = fast
    params = bundle.trainable_parameters()
    loss = bundle.loss(X, y)
    return loss.detach(), torch.autograd.grad(loss, params)


@pytest.mark.parametrize("model,extra", [("sgpr", ()), ("fitc", ()), ("sgpr", ("model.kernel=matern",)),
                                         ("fitc", ("model.ard=false", "model.learn_inducing=false"))])
@pytest.mark.parametrize("block", [64, 100, 150])  # uneven last block; two blocks (the smallest blocked case)
def test_blocked_loss_equals_plain_loss(model, extra, block):
    bundle, X, y = bundle_and_data(model, extra=extra)
    bundle.BLOCK = block
    opt = torch.optim.Adam(bundle.trainable_parameters(), lr=0.05)
    for _ in range(2):  # and after an Adam step through the blocked path
        ref_loss, ref_g = loss_and_grads(bundle, X, y, fast=False)
        loss, g = loss_and_grads(bundle, X, y, fast=True)
        assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=0), (loss, ref_loss)
        for a, b in zip(g, ref_g):
            assert torch.allclose(a, b, rtol=1e-10, atol=1e-10 * b.abs().max().item()), (a - b).abs().max()
        opt.zero_grad()
        bundle.fast = True
        bundle.loss(X, y).backward()
        opt.step()


def test_blocked_terms_equal_terms():
    bundle, X, y = bundle_and_data("fitc")
    bundle.BLOCK = 64
    t, tb = bundle.terms(X, y), bundle.blocked_terms(X, y)
    assert tb.A is None
    for name in ("L", "lam", "d", "LB", "c", "y"):
        assert torch.allclose(getattr(tb, name), getattr(t, name), rtol=1e-10, atol=1e-12), name
    # the plain loss below two blocks
    bundle.BLOCK = 1000
    calls = []
    orig = collapsed.collapsed_terms_blocked
    collapsed.collapsed_terms_blocked = lambda *a, **k: calls.append(1) or orig(*a, **k)
    try:
        bundle.loss(X, y)
    finally:
        collapsed.collapsed_terms_blocked = orig
    assert calls == []


@pytest.mark.parametrize("extra", [("method=kl_pac_sgp",), ("method=sqrt_pac_sgp", "pac.sparse_q=vfe"),
                                   ("method=kl_pac_sgp", "pac.loss=exp", "model.learn_inducing=false")])
@pytest.mark.parametrize("block", [64, 150])  # uneven last block; two blocks
def test_pac_sgp_blocked_loss_equals_plain_loss(extra, block):
    # PAC-SGP's bound needs q(f) at every training point: the blocked path's second pass (LB^-1 A per block) against
    # collapsed_terms + predict_at_inputs on all the points
    bundle, X, y = bundle_and_data("pac_sgp", extra=("paper=pac", *extra))
    bundle.BLOCK = block
    ref_loss, ref_g = loss_and_grads(bundle, X, y, fast=False)
    loss, g = loss_and_grads(bundle, X, y, fast=True)
    assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=0), (loss, ref_loss)
    for a, b in zip(g, ref_g):
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-10 * b.abs().max().item()), (a - b).abs().max()


def test_blocked_marginals_equal_predict_at_inputs():
    bundle, X, y = bundle_and_data("fitc")
    t = bundle.terms(X, y)
    Kuu = bundle.kernel(bundle.Z).to_dense()
    blocks = ((bundle.kernel(bundle.Z, Xb).to_dense(), bundle.kernel(Xb, diag=True), yb)
              for Xb, yb in zip(X.split(70), y.split(70)))
    tb, mean, var = collapsed.blocked_terms_and_marginals(Kuu, blocks, bundle.noise, 1.0, collapsed.default_jitter(Kuu))
    ref_mean, ref_var = collapsed.predict_at_inputs(t)
    assert tb.A is None and mean.shape == var.shape == (300,)
    assert torch.allclose(mean, ref_mean, rtol=1e-10, atol=1e-12) and torch.allclose(var, ref_var, rtol=1e-10, atol=1e-12)
