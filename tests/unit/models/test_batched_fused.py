"""The fused unwhitened q(f) + KL of the batched beta grid (models/batched_unwhitened.py) against GPyTorch's
UnwhitenedVariationalStrategy path: the [B] member losses and every parameter's gradient, float64, 1e-10
relative; probit and Gaussian likelihoods, DLM (PredictiveLogLikelihood / closed form) and ELBO (quadrature /
closed form), joint (every hyperparameter and Z trained) and fixed (only q(u) trained) members."""

import gpytorch
import pytest
import torch

from dlm_bench.estimators import mll_class
from dlm_bench.likelihoods import LIKELIHOODS
from dlm_bench.models.batched_svgp import BatchedBundle
from dlm_bench.models.batched_unwhitened import fused_unwhitened_predictive
from dlm_bench.models.svgp import SVGP, SVGPBundle
from tests.helpers import perturb_batched_members

B, N, M, D = 4, 60, 7, 2
BETAS = [100.0, 10.0, 1.0, 0.1]


def _template(likelihood: str, objective: str, estimator: str):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(N, D, generator=g, dtype=torch.float64)
    f = torch.sin(2 * X[:, 0]) + X[:, 1]
    y = (f > 0).double() if likelihood == "probit" else f + 0.1 * torch.randn(N, generator=g, dtype=torch.float64)
    kernel = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=D))
    model = SVGP(X[:M].clone() + 0.05, kernel, whiten=False)
    lik = LIKELIHOODS[likelihood]()
    bundle = SVGPBundle(model, lik, mll_class(objective, estimator), N, 1.0, likelihood_name=likelihood).double()
    bundle.train()
    bundle.loss(X, y)  # the first training-mode call initialises q(u), as before a batch is built
    return bundle, X, y


def _loss_and_grads(batch, X, y, fused: bool):
    batch.fused = fused
    batch.zero_grad(set_to_none=True)
    losses = batch.loss(X, y)
    losses.sum().backward()
    grads = {n: p.grad.clone() for n, p in batch.named_parameters() if p.requires_grad}
    return losses.detach(), grads


CASES = [("probit", "dlm", "exact"), ("probit", "elbo", "quadrature"), ("gaussian", "dlm", "exact"),
         ("gaussian", "elbo", "exact")]


@pytest.mark.parametrize("fixed", [False, True], ids=["joint", "fixed"])
@pytest.mark.parametrize("likelihood, objective, estimator", CASES)
def test_fused_equals_gpytorch_path(likelihood, objective, estimator, fixed):
    template, X, y = _template(likelihood, objective, estimator)
    batch = BatchedBundle(template, BETAS, fixed=fixed)
    perturb_batched_members(batch, skip_frozen=fixed)
    batch.train()
    assert batch.fused
    ref_loss, ref_grads = _loss_and_grads(batch, X, y, fused=False)
    loss, grads = _loss_and_grads(batch, X, y, fused=True)
    assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=0)
    assert set(grads) == set(ref_grads) and len(grads) >= (1 if fixed else 5)
    for name, g in grads.items():
        r = ref_grads[name]
        scale = r.abs().max().clamp_min(1e-300)
        assert (g - r).abs().max() <= 1e-10 * scale, (name, (g - r).abs().max() / scale)
    # ... and each member's fused loss is the unbatched model's loss with that member's state
    template.train()
    for b in range(B):
        batch.gather(b)
        template.mll.beta = BETAS[b]
        assert torch.allclose(template.loss(X, y).detach(), loss[b], rtol=1e-10, atol=0)


def test_kl_is_taken_once():
    """The fused KL is handed to the MLL's next kl_divergence() call only; a later call is GPyTorch's."""
    template, X, y = _template("probit", "dlm", "exact")
    batch = BatchedBundle(template, BETAS, fixed=False)
    perturb_batched_members(batch)
    strategy = batch.model.variational_strategy
    fused_unwhitened_predictive(batch.model, X)
    kl = strategy.kl_divergence()
    assert strategy._fused_kl is None
    batch.model(X)  # GPyTorch's forward fills the prior memo
    assert torch.allclose(kl, strategy.kl_divergence(), rtol=1e-10, atol=0)
    batch.train()
    batch.loss(X, y)  # the MLL took the fused KL; none is left for a later call
    assert batch.fused and strategy._fused_kl is None
