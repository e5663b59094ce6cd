"""`upstream_boston_nlpd_bug` (spec 3.4 bug 1): the per-point Gaussian NLPD as upstream savigp computes it, checked
against a direct numpy evaluation of upstream's UnivariateGaussian.predict formula and its -logsumexp over the MoG
components, and against the correct NLPD (the two differ, as the bug says)."""

import math

import numpy as np
import pytest
import torch
from scipy.special import logsumexp

from dlm_bench.savigp.likelihoods import Gaussian
from dlm_bench.savigp.model import Savigp
from dlm_bench.savigp.plugin import upstream_gaussian_nlpd_bug


@pytest.mark.parametrize("posterior,K", [("fg", 1), ("mog", 2)])
def test_matches_numpy_upstream_formula(posterior, K):
    g = torch.Generator().manual_seed(0)
    X = torch.rand(30, 2, generator=g, dtype=torch.float64) * 4
    Xs = torch.rand(12, 2, generator=g, dtype=torch.float64) * 4
    ys = torch.sin(Xs.sum(1)) + 0.3 * torch.randn(12, generator=g, dtype=torch.float64)
    mod = Savigp([X[:8].clone()], Gaussian(0.2), posterior=posterior, components=K, lengthscale=1.1, variance=0.9)
    mod.init_posterior()
    with torch.no_grad():  # components with different means, variances and weights
        mod.m.add_(torch.randn(mod.m.shape, generator=g, dtype=torch.float64))
        mod.pi_logits.copy_(torch.linspace(-0.5, 0.7, K, dtype=torch.float64))
        b, Sig = mod.marginals(Xs)
        got = upstream_gaussian_nlpd_bug(mod, b, Sig, ys).numpy()
        correct = -mod.log_predictive(Xs, ys).numpy()
    pi = mod.pi.detach().numpy()
    y = ys.numpy()
    lpd = np.empty((12, K))
    for k in range(K):  # upstream: var = sigma + self.sigma; lpd = -((0.5 (Ys - mu))^2 / var + log(2 pi var))
        mu, var = b[k][:, 0].numpy(), Sig[k][:, 0].numpy() + mod.likelihood.sigma2.item()
        lpd[:, k] = -(np.square(0.5 * (y - mu)) / var + np.log(2.0 * math.pi * var))
    want = -logsumexp(lpd, axis=1, b=pi)  # savigp._predict_comp: -logsumexp(nlpd, 1, self.MoG.pi)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert not np.allclose(got, correct, atol=1e-3)  # the bug changes the values
