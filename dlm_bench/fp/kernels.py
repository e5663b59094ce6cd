"""The squared-exponential (RBF) kernel of the FP paper's models (fp/) and of the sparse GGPMs (sggpm/), and the
squared distance SAVIGP's ARD kernel applies to its per-dimension scaled inputs (savigp/model.py SEKernel):

    k(x, x') = sf2 exp(-|x - x'|^2 / (2 ell^2))   (GPML covSEiso; Sheth & Khardon 2016; Sheth et al. 2015).

One module for both packages, written out here rather than GPyTorch's `RBFKernel` (which the Trainer models use,
models/components.py), for two reasons:
* Inputs. These models work on plain tensors with the hyperparameters as numbers (GPML's log scale, optimised by
  scipy with autograd gradients, or frozen; fp/frozen_hyperparameters.py, sggpm/hyperparameter_learning.py).
  GPyTorch's kernel is a Module whose lengthscale / outputscale are softplus-constrained parameters: setting
  ell = 4.456 and reading it back moves K by ~5e-8 (measured, float64), which is not round-off.
* Reproducibility. With the constraint made the identity, GPyTorch's distance (inputs centred, an augmented
  matrix product) still differs from this one by ~1e-15, so every recorded FP / SGGPM run would change in its last
  digits (scripts/six_run_check.sh compares metrics with ==). The two agree to round-off
  (tests/unit/fp/test_fp_kernels.py checks ours against numpy and GPyTorch).
"""

from __future__ import annotations

import torch


def sq_dist(X1: torch.Tensor, X2: torch.Tensor) -> torch.Tensor:
    """|x_i - x'_j|^2 by |x|^2 + |x'|^2 - 2 x.x', clamped at 0 (rounding can make it slightly negative)."""
    return ((X1 * X1).sum(1)[:, None] + (X2 * X2).sum(1)[None, :] - 2 * X1 @ X2.T).clamp_min(0.0)


def rbf(X1: torch.Tensor, X2: torch.Tensor, lengthscale, outputscale) -> torch.Tensor:
    """sf2 exp(-0.5 |x - x'|^2 / ell^2); lengthscale and outputscale may be floats or 0-d tensors (autograd)."""
    return outputscale * torch.exp(-0.5 * sq_dist(X1, X2) / lengthscale**2)
