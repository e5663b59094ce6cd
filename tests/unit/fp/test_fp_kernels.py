"""fp.kernels.rbf, the one SE kernel of fp/ and sggpm/, against a numpy re-derivation and GPyTorch's RBFKernel."""

import gpytorch
import numpy as np
import torch

from dlm_bench.fp.kernels import rbf, sq_dist
from dlm_bench.sggpm.model import kernel
from tests import reference as ref

ELL, SF2 = 1.7, 2.3


def data():
    rng = np.random.default_rng(3)
    return rng.normal(size=(30, 4)) * 2.0, rng.normal(size=(7, 4))


def test_rbf_matches_the_numpy_reference():
    X, Z = data()
    got = rbf(torch.as_tensor(X), torch.as_tensor(Z), ELL, SF2).numpy()
    np.testing.assert_allclose(got, ref.rbf(X, Z, ELL, SF2), rtol=1e-13, atol=1e-15)
    d2 = ((X[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(sq_dist(torch.as_tensor(X), torch.as_tensor(Z)).numpy(), d2, rtol=1e-12, atol=1e-12)
    assert (sq_dist(torch.as_tensor(X), torch.as_tensor(X)).diagonal() >= 0).all()


def test_rbf_agrees_with_gpytorchs_rbf_kernel_to_round_off():
    """The reason for our own module is not different math: GPyTorch's kernel (identity-constrained lengthscale, so
    that it holds exactly ELL) gives the same matrix to ~1e-15."""
    X, Z = (torch.as_tensor(a) for a in data())
    k = gpytorch.kernels.RBFKernel(lengthscale_constraint=gpytorch.constraints.Positive(transform=None,
                                                                                       inv_transform=None)).double()
    with torch.no_grad():
        k.raw_lengthscale.fill_(ELL)
        want = SF2 * k(X, Z).to_dense()
    np.testing.assert_allclose(rbf(X, Z, ELL, SF2).numpy(), want.numpy(), rtol=1e-13, atol=1e-15)


def test_rbf_lengthscale_gradient_matches_finite_differences():
    X, Z = (torch.as_tensor(a) for a in data())
    ell = torch.tensor(ELL, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(rbf(X, Z, ell, SF2).sum(), ell)
    h = 1e-6
    fd = (ref.rbf(X.numpy(), Z.numpy(), ELL + h, SF2).sum() - ref.rbf(X.numpy(), Z.numpy(), ELL - h, SF2).sum()) / (2 * h)
    np.testing.assert_allclose(float(g), fd, rtol=1e-7)


def test_sggpm_se_kernel_is_the_shared_rbf_bit_for_bit():
    X, Z = (torch.as_tensor(a) for a in data())
    assert torch.equal(kernel("se", X, Z, ELL, SF2), rbf(X, Z, ELL, SF2))
