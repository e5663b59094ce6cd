"""The batched beta grid's whitened joint members through the blocked q(f) (models/fast_svgp.py on a model with
batch_shape [B]) against GPyTorch's VariationalStrategy call on the same batch: the [B] member losses and every
parameter's gradient, float64, 1e-10 relative; Gaussian (DLM closed form, ELBO), probit (DLM, ELBO by
quadrature), constant mean and a Matern kernel; uneven last block. And each member's blocked loss is the
unbatched model's loss with that member's state."""

import gpytorch
import pytest
import torch

from dlm_bench.config.schema import MeanFunction
from dlm_bench.estimators import mll_class
from dlm_bench.likelihoods import LIKELIHOODS
from dlm_bench.models import fast_svgp
from dlm_bench.models.batched_svgp import BatchedBundle
from dlm_bench.models.svgp import SVGP, SVGPBundle
from tests.helpers import perturb_batched_members

B, N, M, D = 4, 700, 9, 3
BETAS = [100.0, 10.0, 1.0, 0.1]


def _template(likelihood: str, objective: str, estimator: str, matern: bool, mean: MeanFunction):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(N, D, generator=g, dtype=torch.float64)
    f = torch.sin(2 * X[:, 0]) + X[:, 1] - 0.5 * X[:, 2]
    y = (f > 0).double() if likelihood == "probit" else f + 0.1 * torch.randn(N, generator=g, dtype=torch.float64)
    base = gpytorch.kernels.MaternKernel(nu=2.5, ard_num_dims=D) if matern else gpytorch.kernels.RBFKernel(
        ard_num_dims=D)
    model = SVGP(X[:M].clone() + 0.05, gpytorch.kernels.ScaleKernel(base), mean=mean, whiten=True)
    lik = LIKELIHOODS[likelihood]()
    bundle = SVGPBundle(model, lik, mll_class(objective, estimator), N, 1.0, likelihood_name=likelihood).double()
    bundle.train()
    bundle.fast_joint = False
    bundle.loss(X, y)  # the first training-mode call initialises q(u), as before a batch is built
    bundle.fast_joint = True
    return bundle, X, y


def _loss_and_grads(batch, X, y, block):
    batch.zero_grad(set_to_none=True)
    if block is None:
        batch.template.fast_joint = False
        losses = batch.loss(X, y)
        batch.template.fast_joint = True
    else:
        losses = -batch.mll(fast_svgp.blocked_whitened_predictive(batch.model, X, block), y)
    losses.sum().backward()
    grads = {n: p.grad.clone() for n, p in batch.named_parameters() if p.requires_grad}
    return losses.detach(), grads


CASES = [("gaussian", "dlm", "exact", False, MeanFunction.zero),
         ("gaussian", "elbo", "exact", True, MeanFunction.zero),
         ("probit", "dlm", "exact", False, MeanFunction.constant),
         ("probit", "elbo", "quadrature", False, MeanFunction.constant)]


@pytest.mark.parametrize("likelihood, objective, estimator, matern, mean", CASES)
def test_blocked_batch_equals_gpytorch_path(likelihood, objective, estimator, matern, mean):
    template, X, y = _template(likelihood, objective, estimator, matern, mean)
    batch = BatchedBundle(template, BETAS, fixed=False)
    perturb_batched_members(batch)
    batch.train()
    assert fast_svgp.supports_blocked(batch.model)
    ref_loss, ref_grads = _loss_and_grads(batch, X, y, None)
    for block in (128, 300, N):  # uneven last block; one block
        loss, grads = _loss_and_grads(batch, X, y, block)
        assert loss.shape == (B,)
        assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=0)
        assert set(grads) == set(ref_grads) and len(grads) >= 5
        for name, g in grads.items():
            r = ref_grads[name]
            scale = r.abs().max().clamp_min(1e-300)
            assert (g - r).abs().max() <= 1e-10 * scale, (name, block, (g - r).abs().max() / scale)
    # each member's blocked loss is the unbatched model's loss (GPyTorch's call) with that member's state
    template.fast_joint = False
    for b in range(B):
        batch.gather(b)
        template.mll.beta = BETAS[b]
        assert torch.allclose(template.loss(X, y).detach(), loss[b], rtol=1e-10, atol=0)


def test_batch_loss_takes_the_blocked_path_when_worth_it(monkeypatch):
    """BatchedBundle.loss uses the blocked call at >= 2 blocks of inputs on the CPU, GPyTorch's call below that,
    and never for fast_joint = False."""
    template, X, y = _template("gaussian", "dlm", "exact", False, MeanFunction.zero)
    batch = BatchedBundle(template, BETAS, fixed=False)
    batch.train()
    calls = []
    orig = fast_svgp.blocked_whitened_predictive
    monkeypatch.setattr(fast_svgp, "blocked_whitened_predictive", lambda *a, **k: calls.append(1) or orig(*a, **k))
    block = fast_svgp.block_size(batch.model)
    assert block == min(fast_svgp.BLOCK, fast_svgp.BATCH_BLOCK_ELEMENTS // (B * M))
    monkeypatch.setattr(fast_svgp, "BATCH_BLOCK_ELEMENTS", 300 * B * M)  # blocks of 300: N = 700 is two or more
    batch.loss(X, y)
    assert calls == [1]
    batch.loss(X[:500], y[:500])  # under two blocks
    assert calls == [1]
    template.fast_joint = False
    batch.loss(X, y)
    assert calls == [1]
