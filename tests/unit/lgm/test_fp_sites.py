"""The FP sites built on the likelihood layer (issue 56) give the numbers of the formulas they replaced, bit for bit,
and agree with scipy."""

import math

import numpy as np
import torch
from scipy import stats

from dlm_bench.gpmath.sites import GaussianSite


def test_gaussian_site_on_the_layer_equals_its_former_formula_and_scipy():
    g = torch.Generator().manual_seed(1)
    for s2 in (0.0742394477307473, 1.0, 3.7, 1e-3):
        y, m = (3 * torch.randn(5000, generator=g, dtype=torch.float64) for _ in range(2))
        v = 3 * torch.rand(5000, generator=g, dtype=torch.float64)
        E, rho, lam = GaussianSite(s2).site_expectations(y, m, v)
        r = y - m
        assert torch.equal(E, -0.5 * (math.log(2.0 * math.pi) + math.log(s2)) - (r * r + v) / (2 * s2))
        # E_q[log N(y|f, s2)] = log N(y|m, s2) - v / (2 s2); rho = dE/dm; lam = 2 dE/dv
        ref = stats.norm.logpdf(y.numpy(), m.numpy(), math.sqrt(s2)) - v.numpy() / (2 * s2)
        np.testing.assert_allclose(E.numpy(), ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rho.numpy(), r.numpy() / s2, rtol=1e-14)
        assert torch.equal(lam, torch.full_like(m, -1.0 / s2))
