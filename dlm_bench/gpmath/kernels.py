"""The kernels of the plain-tensor GP models (lgm/, sggpm/, savigp/): hyperparameters are numbers or 0-d / 1-d tensors,
inputs are N x D tensors.

    rbf        k(x, x') = sf2 exp(-|x - x'|^2 / (2 ell^2))         GPML covSEiso (Sheth & Khardon 2016; Sheth et al. 2015)
    se_scaled  k(x, x') = sf2 exp(-|x/ell - x'/ell|^2 / 2)          SE with ARD (ell per dimension; SAVIGP)
    matern12   k(x, x') = sf2 exp(-|x - x'| / ell)                  GPML covMaterniso(1) (SGGPM supplement Fig. 1)
    poly2      k(x, x') = sf2 (x.x' / ell^2 + 1)^2                   degree-2 polynomial (SGGPM supplement Fig. 1)

rbf and se_scaled are the same function written two ways; each keeps the arithmetic its callers have always used
(dividing the distance by ell^2 vs. scaling the inputs), because the recorded runs compare their metrics with ==
(scripts/six_run_check.sh) and the two orders differ in the last bits. models/fused_rbf.py (the fused GPyTorch path of
the SVGP family) is tested against rbf / se_scaled (tests/unit/gpmath/test_kernels.py).

One module for these packages, written out here rather than GPyTorch's `RBFKernel` (which the Trainer models use,
models/components.py), for two reasons:
* Inputs. These models work on plain tensors with the hyperparameters as numbers (GPML's log scale, optimised by
  scipy with autograd gradients, or frozen; lgm/frozen_hyperparameters.py, sggpm/hyperparameter_learning.py).
  GPyTorch's kernel is a Module whose lengthscale / outputscale are softplus-constrained parameters: setting
  ell = 4.456 and reading it back moves K by ~5e-8 (measured, float64), which is not round-off.
* Reproducibility. With the constraint made the identity, GPyTorch's distance (inputs centred, an augmented
  matrix product) still differs from this one by ~1e-15, so every recorded FP / SGGPM run would change in its last
  digits (scripts/six_run_check.sh compares metrics with ==). The two agree to round-off
  (tests/unit/gpmath/test_kernels.py checks ours against numpy and GPyTorch).
"""

from __future__ import annotations

import torch


def sq_dist(X1: torch.Tensor, X2: torch.Tensor) -> torch.Tensor:
    """|x_i - x'_j|^2 by |x|^2 + |x'|^2 - 2 x.x', clamped at 0 (rounding can make it slightly negative)."""
    return ((X1 * X1).sum(1)[:, None] + (X2 * X2).sum(1)[None, :] - 2 * X1 @ X2.T).clamp_min(0.0)


def rbf(X1: torch.Tensor, X2: torch.Tensor, lengthscale, outputscale) -> torch.Tensor:
    """sf2 exp(-0.5 |x - x'|^2 / ell^2); lengthscale and outputscale may be floats or 0-d tensors (autograd)."""
    return outputscale * torch.exp(-0.5 * sq_dist(X1, X2) / lengthscale**2)


def se_scaled(X1: torch.Tensor, X2: torch.Tensor, lengthscale, outputscale) -> torch.Tensor:
    """sf2 exp(-0.5 |x/ell - x'/ell|^2): the inputs scaled per dimension first (ARD: ell of size D; isotropic: size
    1), as SAVIGP's upstream code computes it."""
    return outputscale * torch.exp(-0.5 * sq_dist(X1 / lengthscale, X2 / lengthscale))


def matern12(X1: torch.Tensor, X2: torch.Tensor, lengthscale, outputscale) -> torch.Tensor:
    """sf2 exp(-|x - x'| / ell); the 1e-300 keeps the square root's gradient finite at coincident points."""
    return outputscale * torch.exp(-torch.sqrt(sq_dist(X1, X2) + 1e-300) / lengthscale)


def poly2(X1: torch.Tensor, X2: torch.Tensor, lengthscale, outputscale) -> torch.Tensor:
    """sf2 (x.x' / ell^2 + 1)^2."""
    return outputscale * (X1 @ X2.T / lengthscale**2 + 1.0) ** 2


def poly2_diag(X: torch.Tensor, lengthscale, outputscale) -> torch.Tensor:
    """The diagonal of poly2(X, X) without the N x N matrix."""
    return outputscale * ((X * X).sum(1) / lengthscale**2 + 1.0) ** 2
