"""Fused CPU paths for the two sparse-GP training losses with an RBF kernel: the whitened SVGP's q(f) at the inputs and
the collapsed (Titsias 2009) bound's data statistics, each with a hand-written backward (issue 57).

Why they exist. The blocked GPyTorch paths (models/fast_svgp.py, collapsed.collapsed_terms_blocked) spend a step
(profile in docs/performance.md, "Round 3"):
  * in the triangular solve A = L^-1 K_ZX (and, for SGPR, its backward L^-T dA): Intel MKL's dtrsm reaches 6-11
    GFLOP/s on an AMD EPYC core, against 25-35 for dgemm. `BlockedLower` solves by block forward substitution with
    the diagonal blocks inverted once (BLK x BLK, M^3 work): every N-sized product is then a GEMM.
  * in about fourteen elementwise passes over each M x N array for the kernel and its autograd backward (division by
    the lengthscales, centring, the padded distance product, clamp, exp, outputscale, and each one's backward); the
    fused kernel makes three passes forward (bias + GEMM, clamp, exp) and one backward (dK * K), and the lengthscale,
    outputscale and Z gradients follow from H = dK * K with one M x D product (formulas at `rbf_grads`).
  * for SGPR, in the N-sized GEMMs of the backward: autograd differentiates A A^T as a product of two different
    matrices (two GEMMs) and back-substitutes L^-T dA over N columns, then forms dL = -dK A^T (another GEMM). With
    the statistics P = A A^T and v = A y as outputs, dA = W A + dv y^T with an M x M W, so
    dK_uf = (L^-T W) A + (L^-T dv) y^T is one GEMM and dL = -(L^-T W) P - (L^-T dv) v^T is M x M work only (`CollapsedRBFStats.backward`).

Numerics. Both compute the same quantities as GPyTorch's (and collapsed.py's) path by the same factorisation (A = L^-1
K with L = chol(K_ZZ + jitter); no explicit K_ZZ^-1 is formed), so the results agree to float64 rounding:
tests/unit/models/test_fused_rbf.py checks loss and every gradient against the plain GPyTorch path to 1e-9 relative,
also with nearly coincident inducing points. The block substitution with inverted BLK x BLK diagonal blocks has the error bound of
a blocked triangular solve that depends on the conditioning of those blocks, not of the whole L (Higham, Accuracy and
Stability of Numerical Algorithms, 2nd ed., sec. 13.2 / 14.2).

Scope: ScaleKernel(RBFKernel) exactly (ARD or one lengthscale), no batch shape, no active_dims, inputs that need no
gradient, on the CPU. Anything else takes the blocked GPyTorch path.
"""

from __future__ import annotations

import gpytorch
import torch
from torch.autograd.function import once_differentiable

# Diagonal block size of the block substitution. Measured (one thread, 2-core AMD EPYC, MKL, float64; M x 2048 and
# M x 5000 right-hand sides, M = 100 and 200): 16-64 all beat MKL's dtrsm 1.5-2x; 32 was best or within noise of it.
BLK = 32
# Input points per block: M x BLOCK arrays stay in the L2 cache (as models/fast_svgp.py; 2048 measured there).
BLOCK = 2048


def supports_fused_rbf(kernel, Z: torch.Tensor, X: torch.Tensor) -> bool:
    """ScaleKernel(RBFKernel) with no batch shape and no active_dims, Z [M, D] and X [N, D] on the CPU, X without
    gradient: what the fused functions implement."""
    if type(kernel) is not gpytorch.kernels.ScaleKernel or type(kernel.base_kernel) is not gpytorch.kernels.RBFKernel:
        return False
    base = kernel.base_kernel
    if kernel.active_dims is not None or base.active_dims is not None:
        return False
    if kernel.batch_shape != torch.Size() or base.batch_shape != torch.Size():
        return False
    ls = base.lengthscale
    return (Z.dim() == 2 and X.dim() == 2 and X.device.type == "cpu" and Z.device.type == "cpu"
            and not X.requires_grad and ls.shape in (torch.Size([1, 1]), torch.Size([1, X.shape[-1]]))
            and kernel.outputscale.dim() == 0)


class BlockedLower:
    """Solves with a lower-triangular L [M, M]: block substitution with the BLK x BLK diagonal blocks inverted once, so
    the N-sized work is GEMMs (see the module docstring). `solve(K)` = L^-1 K for K [M, n] (any strides)."""

    def __init__(self, L: torch.Tensor, blk: int = BLK):
        self.L = L
        M = L.shape[-1]
        self.cuts = [(i, min(i + blk, M)) for i in range(0, M, blk)]
        self.inv = [torch.linalg.solve_triangular(L[i:j, i:j], torch.eye(j - i, dtype=L.dtype, device=L.device),
                                                  upper=False) for i, j in self.cuts]

    def solve(self, K: torch.Tensor) -> torch.Tensor:
        X = torch.empty(K.shape, dtype=K.dtype, device=K.device)  # row-major: the row blocks below are contiguous
        for (i, j), Li in zip(self.cuts, self.inv):
            R = K[i:j] if i == 0 else torch.addmm(K[i:j], self.L[i:j, :i], X[:i], alpha=-1.0)
            torch.mm(Li, R, out=X[i:j])
        return X


def scaled_inputs(X, Z, lengthscale):
    """Centred, lengthscale-scaled inputs, as GPyTorch's RBFKernel (x / l) and sq_dist (minus the mean of Z / l)."""
    mu = Z.mean(0, keepdim=True)
    return (X - mu) / lengthscale, (Z - mu) / lengthscale


def rbf_block(zs, zn_half, xs_b, log_os):
    """K = outputscale * exp(-|z - x|^2 / 2) on scaled inputs, M x n: E = log_os - |z|^2/2 - |x|^2/2 + z.x by one
    GEMM with the bias as its input, clamped at log_os (squared distance >= 0, as GPyTorch's clamp_min(0)), exp."""
    bias = (log_os - zn_half).unsqueeze(-1) - 0.5 * xs_b.square().sum(-1)
    E = torch.addmm(bias, zs, xs_b.mT)
    return E.clamp_max_(log_os).exp_()


def rbf_grads(H, zs, xs_b, acc):
    """Accumulate the RBF gradients from H = dK * K (= dloss/dE, E = log K) of one block into acc = [row sums r of H
    (M), H xs (M x D), c^T xs^2 with c the column sums (D), sum of H]. With E_ij = log_os - |zs_i - xs_j|^2 / 2 (zs = (z - mu) / l):
    dE_ij/dzs_i = -(zs_i - xs_j), dE_ij/dl_d = (zs_id - xs_jd)^2 / l_d, dE_ij/dlog_os = 1; summed in
    `rbf_finish`."""
    r = H.sum(1)
    c = H.sum(0)
    acc[0] = acc[0] + r
    acc[1] = acc[1] + H @ xs_b
    acc[2] = acc[2] + c @ xs_b.square()
    acc[3] = acc[3] + r.sum()


def rbf_finish(acc, zs, lengthscale, outputscale, needs):
    """(dZ, dlengthscale, doutputscale) from the accumulated block sums (see `rbf_grads`); None where not needed."""
    r, HX, cx2, hsum = acc
    dZ = dls = dos = None
    if needs[0]:
        dZ = (HX - r.unsqueeze(-1) * zs) / lengthscale  # dE/dZ = dE/dzs / l
    if needs[1]:
        per_dim = r @ zs.square() + cx2 - 2.0 * (zs * HX).sum(0)  # sum_ij H_ij (zs_id - xs_jd)^2
        dls = (per_dim / lengthscale.reshape(-1) if lengthscale.numel() > 1
               else per_dim.sum() / lengthscale.reshape(-1)).reshape(lengthscale.shape)
    if needs[2]:
        dos = (hsum / outputscale).reshape(outputscale.shape)
    return dZ, dls, dos


class WhitenedRBFPredictive(torch.autograd.Function):
    """The whitened SVGP predictive updates at X (GPyTorch's `ComputePredictiveUpdates` applied to K_ZX of the RBF
    kernel): with A = L^-1 K_ZX, mean_update = A^T m and var_update = colsum(A * (S - I) A) (the marginals of
    q(f) = int p(f|u) q(u) du, Hensman et al. 2015, whitened u = L v as GPyTorch's `VariationalStrategy.forward`).
    The backward follows GPyTorch's: dm = A dmean, d(S - I) = A diag(dvar) A^T,
    dK = L^-T [m dmean^T + 2 (S - I) A diag(dvar)] and dL = -2 L^-T (S - I) d(S - I) - L^-T m dm^T (M x M), then
    the kernel's from H = dK * K."""

    @staticmethod
    def forward(ctx, X, Z, lengthscale, outputscale, chol, middle, m, block):
        xs, zs = scaled_inputs(X, Z, lengthscale)
        zn_half = 0.5 * zs.square().sum(-1)
        log_os = torch.log(outputscale)
        tri = BlockedLower(chol)
        means, variances, saved = [], [], []
        for xs_b in xs.split(block):
            K = rbf_block(zs, zn_half, xs_b, log_os)
            A = tri.solve(K)
            B = middle @ A
            means.append(A.mT @ m)
            variances.append((A * B).sum(0))
            saved.append((K, A))
        ctx.block = block  # the blocks' K and A are saved (not recomputed): the backward reads each once
        ctx.save_for_backward(xs, zs, lengthscale, outputscale, chol, middle, m, *(t for KA in saved for t in KA))
        return torch.cat(means), torch.cat(variances)

    @staticmethod
    @once_differentiable
    def backward(ctx, dmean, dvar):
        xs, zs, lengthscale, outputscale, chol, middle, m, *KA = ctx.saved_tensors
        if dmean is None:
            dmean = torch.zeros(xs.shape[0], dtype=xs.dtype)
        if dvar is None:
            dvar = torch.zeros(xs.shape[0], dtype=xs.dtype)
        P = torch.linalg.solve_triangular(chol.mT, middle, upper=True)  # L^-T (S - I)
        q = torch.linalg.solve_triangular(chol.mT, m.unsqueeze(-1), upper=True).squeeze(-1)  # L^-T m
        M, D = zs.shape
        dm = torch.zeros_like(m)
        dmid = torch.zeros_like(middle)
        acc = [torch.zeros(M, dtype=zs.dtype), torch.zeros(M, D, dtype=zs.dtype), torch.zeros(D, dtype=zs.dtype), 0.0]
        kernel_needed = any(ctx.needs_input_grad[1:4])
        for K, A, xs_b, dmean_b, dvar_b in zip(KA[0::2], KA[1::2], xs.split(ctx.block), dmean.split(ctx.block),
                                                 dvar.split(ctx.block)):
            Ad = A * dvar_b
            dm += A @ dmean_b
            dmid += Ad @ A.mT
            if kernel_needed:
                dK = torch.addmm(torch.outer(q, dmean_b), P, Ad, alpha=2.0)
                rbf_grads(dK.mul_(K), zs, xs_b, acc)
        dchol = None
        if ctx.needs_input_grad[4]:
            dchol = (-2.0 * P @ dmid - torch.outer(q, dm)).tril()
        dZ, dls, dos = rbf_finish(acc, zs, lengthscale, outputscale, ctx.needs_input_grad[1:4])
        return (None, dZ, dls, dos, dchol, dmid if ctx.needs_input_grad[5] else None,
                dm if ctx.needs_input_grad[6] else None, None)


class CollapsedRBFStats(torch.autograd.Function):
    """The data statistics of the collapsed bound, P = A A^T and v = A y with A = L^-1 K_ZX (M x N, never returned):
    for alpha = 0 (Titsias 2009) the bound needs only P, v and sum_i |a_i|^2 = tr P (collapsed.vfe_from_stats).
    Backward: from dP and dv, dA = W A + dv y^T with W = dP + dP^T, so dK_ZX = L^-T dA = V A + w y^T (V = L^-T W,
    w = L^-T dv) and dL = -tril(L^-T dA A^T) = -tril(V P + w v^T)."""

    @staticmethod
    def forward(ctx, X, Z, lengthscale, outputscale, chol, y, block):
        xs, zs = scaled_inputs(X, Z, lengthscale)
        zn_half = 0.5 * zs.square().sum(-1)
        log_os = torch.log(outputscale)
        tri = BlockedLower(chol)
        M = zs.shape[0]
        P = torch.zeros(M, M, dtype=zs.dtype)
        v = torch.zeros(M, dtype=zs.dtype)
        saved = []
        for xs_b, y_b in zip(xs.split(block), y.split(block)):
            K = rbf_block(zs, zn_half, xs_b, log_os)
            A = tri.solve(K)
            P.addmm_(A, A.mT)
            v.addmv_(A, y_b)
            saved.append((K, A))
        ctx.block = block
        ctx.save_for_backward(xs, zs, lengthscale, outputscale, chol, y, P, v, *(t for KA in saved for t in KA))
        return P, v

    @staticmethod
    @once_differentiable
    def backward(ctx, dP, dv):
        xs, zs, lengthscale, outputscale, chol, y, P, v, *KA = ctx.saved_tensors
        M, D = zs.shape
        W = torch.zeros(M, M, dtype=zs.dtype) if dP is None else dP + dP.mT
        dv = torch.zeros(M, dtype=zs.dtype) if dv is None else dv
        V = torch.linalg.solve_triangular(chol.mT, W, upper=True)
        w = torch.linalg.solve_triangular(chol.mT, dv.unsqueeze(-1), upper=True).squeeze(-1)
        acc = [torch.zeros(M, dtype=zs.dtype), torch.zeros(M, D, dtype=zs.dtype), torch.zeros(D, dtype=zs.dtype), 0.0]
        kernel_needed = any(ctx.needs_input_grad[1:4])
        if kernel_needed:
            for K, A, xs_b, y_b in zip(KA[0::2], KA[1::2], xs.split(ctx.block), y.split(ctx.block)):
                dK = torch.addmm(torch.outer(w, y_b), V, A)
                rbf_grads(dK.mul_(K), zs, xs_b, acc)
        dchol = (-(V @ P) - torch.outer(w, v)).tril() if ctx.needs_input_grad[4] else None
        dZ, dls, dos = rbf_finish(acc, zs, lengthscale, outputscale, ctx.needs_input_grad[1:4])
        return None, dZ, dls, dos, dchol, None, None
