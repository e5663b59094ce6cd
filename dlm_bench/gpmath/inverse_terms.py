"""log det C, diag(C^{-1}) and C^{-1} y of a symmetric positive definite C, with a hand-written backward.

The full PAC-GP bound (Reeb et al. 2018, eq. 8 and the Gibbs risk at the training inputs) needs all three for
C = K + sigma^2 I. Autograd through the Cholesky and the triangular inverse L^{-1} that gives diag(C^{-1}) costs
about four O(N^3) triangular solves in the backward pass; the closed form below costs one product with C^{-1}
(which the forward pass kept), because for a loss l(log det C, d = diag(C^{-1}), a = C^{-1} y)

    dl/dC = g_logdet C^{-1} - C^{-1} diag(g_d) C^{-1} - sym(C^{-1} g_a a^T)

(d log det C = tr(C^{-1} dC), dC^{-1} = -C^{-1} dC C^{-1}). Measured at N = 2000, one thread: loss and gradient of
the full PAC-GP bound 2.3x faster (docs/performance.md). Written by hand because neither torch nor GPyTorch offers
diag(C^{-1}) with a cheap gradient. tests/unit/gpmath/test_inverse_terms.py checks it against torch.autograd.gradcheck
and autograd through the plain Cholesky path; tests/unit/pac/test_pac.py the PAC-GP loss's gradients against finite
differences.
"""

from __future__ import annotations

import torch

from .cholesky import CholeskyPolicy


class _InverseTerms(torch.autograd.Function):
    @staticmethod
    def forward(ctx, C: torch.Tensor, y: torch.Tensor):
        L = CholeskyPolicy().factor(C)  # no jitter, no retry: C already holds the noise
        C_inv = torch.cholesky_inverse(L)
        a = C_inv @ y
        ctx.save_for_backward(C_inv, a)
        return 2.0 * L.diagonal().log().sum(), C_inv.diagonal().clone(), a

    @staticmethod
    def backward(ctx, g_logdet, g_diag, g_a):
        C_inv, a = ctx.saved_tensors
        grad = g_logdet * C_inv - (C_inv * g_diag) @ C_inv
        v = C_inv @ g_a
        grad = grad - 0.5 * (torch.outer(v, a) + torch.outer(a, v))
        return grad, (v if ctx.needs_input_grad[1] else None)


def inverse_terms(C: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(log det C, diag(C^{-1}), C^{-1} y) for an N x N positive definite C and an N-vector y."""
    return _InverseTerms.apply(C, y)
