"""gpmath.kernels (the kernels of lgm/, sggpm/ and savigp/) against numpy re-derivations and GPyTorch's RBFKernel, and
the fused RBF blocks of the SVGP family (models/fused_rbf.py) against gpmath.kernels."""

import gpytorch
import numpy as np
import torch

from dlm_bench.gpmath.kernels import matern12, poly2, poly2_diag, rbf, se_scaled, sq_dist
from dlm_bench.models import fused_rbf
from dlm_bench.savigp.model import SEKernel
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


def numpy_d2(A, B, ell):
    """Squared distance of A / ell and B / ell, ell a scalar or one lengthscale per dimension."""
    return (((A[:, None, :] - B[None, :, :]) / np.asarray(ell)) ** 2).sum(-1)


def test_se_scaled_with_ard_matches_numpy():
    X, Z = data()
    ell = np.array([0.7, 1.9, 3.1, 1.2])
    got = se_scaled(torch.as_tensor(X), torch.as_tensor(Z), torch.as_tensor(ell), SF2).numpy()
    np.testing.assert_allclose(got, SF2 * np.exp(-0.5 * numpy_d2(X, Z, ell)), rtol=1e-12, atol=1e-14)


def test_se_scaled_isotropic_is_rbf_to_round_off():
    X, Z = (torch.as_tensor(a) for a in data())
    ell = torch.tensor([ELL], dtype=torch.float64)
    np.testing.assert_allclose(se_scaled(X, Z, ell, SF2).numpy(), rbf(X, Z, ELL, SF2).numpy(), rtol=1e-12, atol=1e-14)


def test_savigp_se_kernel_is_se_scaled_of_its_log_parameters():
    X, Z = (torch.as_tensor(a) for a in data())
    k = SEKernel(4, ard=True, lengthscale=1.3, variance=SF2)
    with torch.no_grad():
        got = k(X, Z).numpy()
    np.testing.assert_allclose(got, SF2 * np.exp(-0.5 * numpy_d2(X.numpy(), Z.numpy(), 1.3)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(k.diag(X).detach().numpy(), np.full(30, SF2), rtol=1e-14)


def test_matern12_and_poly2_match_numpy():
    X, Z = data()
    Xt, Zt = torch.as_tensor(X), torch.as_tensor(Z)
    np.testing.assert_allclose(matern12(Xt, Zt, ELL, SF2).numpy(), SF2 * np.exp(-np.sqrt(numpy_d2(X, Z, 1.0)) / ELL),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(poly2(Xt, Zt, ELL, SF2).numpy(), SF2 * (X @ Z.T / ELL**2 + 1.0) ** 2, rtol=1e-12)
    np.testing.assert_allclose(poly2_diag(Xt, ELL, SF2).numpy(), np.diag(SF2 * (X @ X.T / ELL**2 + 1.0) ** 2),
                               rtol=1e-12)


def test_matern12_gradient_is_finite_at_coincident_points():
    X = torch.as_tensor(data()[1])
    ell = torch.tensor(ELL, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(matern12(X, X, ell, SF2).sum(), ell)
    assert torch.isfinite(g)


def test_fused_rbf_block_is_the_shared_se_kernel():
    """models/fused_rbf.py computes the SE kernel on centred, scaled inputs by one GEMM (the SVGP family's fused path);
    it is the same kernel as gpmath.kernels.se_scaled to round-off, isotropic and ARD."""
    X, Z = (torch.as_tensor(a) for a in data())
    for ell in (torch.tensor([[ELL]], dtype=torch.float64), torch.tensor([[0.7, 1.9, 3.1, 1.2]], dtype=torch.float64)):
        xs, zs = fused_rbf.scaled_inputs(X, Z, ell)
        log_os = torch.tensor(SF2, dtype=torch.float64).log()
        K = fused_rbf.rbf_block(zs, 0.5 * zs.square().sum(-1), xs, log_os)  # M x N
        np.testing.assert_allclose(K.numpy(), se_scaled(Z, X, ell, SF2).numpy(), rtol=1e-12, atol=1e-14)
