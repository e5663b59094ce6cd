"""Fixed-hyperparameter fast path (models/svgp.py FrozenPredictive): with kernel, mean, noise and Z frozen,
L = chol(K_ZZ) and A = L^-1 K_ZX are computed once; loss and gradients equal GPyTorch's own path (the
reference: the same bundle with fast_fixed=False), float64, to 1e-10."""

import pytest
import torch

from dlm_bench.models.builders import build_bundle
from dlm_bench.models.fixed import pretrain_config
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run.context import prepare_data
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.training import gpytorch_internals


def fixed_bundle(overrides, seed=0):
    cfg = compose_config(["objective=dlm", "objective.hyperparameters=fixed", "objective.beta=0.5",
                          "model.num_inducing=20", "trainer.progress=off", *overrides])
    resolve_task_defaults(cfg)
    prep = prepare_data(cfg, torch.device("cpu"), torch.float64)
    X, y = prep.tensors["train"]
    pre = build_bundle(pretrain_config(cfg), X, y).double()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():  # a "trained" SVGP: hyperparameters and Z away from their initial values
        for name, p in pre.named_parameters():
            if not gpytorch_internals.is_q_u_entry(name):
                p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))
    bundle = build_bundle(cfg, X, y).double()
    bundle.adopt_hyperparameters(pre)
    bundle.train()
    bundle.loss(X[:50], y[:50])  # q(u) initialised (to the prior), as on the first training call
    q = gpytorch_internals.q_u_module(bundle.model.variational_strategy)
    with torch.no_grad():  # a general q(u) = N(m, S)
        q.variational_mean.copy_(torch.randn(q.variational_mean.shape, generator=g, dtype=torch.float64))
        q.chol_variational_covar.add_(0.2 * torch.randn(q.chol_variational_covar.shape, generator=g,
                                                        dtype=torch.float64).tril())
    return bundle, X, y


def loss_and_grads(bundle, X, y, fast, seed=5):
    bundle.fast_fixed = fast
    params = bundle.trainable_parameters()
    torch.manual_seed(seed)  # sampling estimators draw the same eps on both paths
    loss = bundle.loss(X, y)
    grads = torch.autograd.grad(loss, params)
    return loss.detach(), grads


@pytest.mark.parametrize("overrides", [
    ["dataset=boston"],  # Gaussian, closed-form DLM
    ["dataset=boston", "estimator=bmc", "estimator.num_samples=4"],
    ["dataset=boston", "model.likelihood=student_t"],  # quadrature
])
def test_fast_fixed_path_equals_gpytorch_path(overrides):
    bundle, X, y = fixed_bundle(overrides)
    assert bundle._frozen is not None
    opt = torch.optim.Adam(bundle.trainable_parameters(), lr=0.05)
    for it in range(3):  # the cached A is reused across iterations while q(u) changes
        for xb, yb in ((X, y), (X[7:207], y[7:207])):  # full batch, and a minibatch (its own A)
            ref_loss, ref_g = loss_and_grads(bundle, xb, yb, fast=False)
            loss, g = loss_and_grads(bundle, xb, yb, fast=True)
            assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=1e-10), (it, loss, ref_loss)
            for a, b in zip(g, ref_g):
                assert torch.allclose(a, b, rtol=1e-10, atol=1e-10), (it, (a - b).abs().max())
        opt.zero_grad()
        bundle.loss(X, y).backward()
        opt.step()


def test_fast_path_recomputes_after_the_hyperparameters_change():
    bundle, X, y = fixed_bundle(["dataset=boston"])
    loss_and_grads(bundle, X, y, fast=True)  # fills the cache
    with torch.no_grad():
        bundle.model.covar_module.base_kernel.raw_lengthscale.add_(0.5)  # e.g. load_state_dict
    ref_loss, _ = loss_and_grads(bundle, X, y, fast=False)
    loss, _ = loss_and_grads(bundle, X, y, fast=True)
    assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=1e-10)
