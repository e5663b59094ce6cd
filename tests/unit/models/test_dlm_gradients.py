"""Log-loss DLM (GPyTorch PredictiveLogLikelihood through SVGPBundle): autograd vs central differences."""

import numpy as np
import pytest
import torch

from dlm_bench.models.svgp import SVGPBundle
from dlm_bench.objectives import OBJECTIVES
from tests.gradcheck import assert_grads_match_finite_differences
from tests.helpers import build, make_problem, set_q


@pytest.mark.parametrize("whiten", [True, False])
def test_dlm_gradients_match_finite_differences(whiten):
    rng, X, y, Z = make_problem(2, n=30, m=5)
    model, lik = build(Z, whiten, 1.1, 0.8, 0.2)
    M = len(Z)
    B = rng.normal(size=(M, M)) * 0.3
    set_q(model, rng.normal(size=M), B @ B.T + 0.2 * np.eye(M))
    bundle = SVGPBundle(model, lik, OBJECTIVES["dlm"].implementation, num_data=len(y), beta=0.5).double()
    bundle.train()
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    params = bundle.trainable_parameters()
    names = {n for n, p in bundle.named_parameters() if p.requires_grad}
    assert any("inducing_points" in n for n in names) and any("chol_variational_covar" in n for n in names)
    assert_grads_match_finite_differences(lambda: bundle.loss(Xt, yt), params)
