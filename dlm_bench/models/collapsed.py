"""Collapsed sparse GP regression: FITC and VFE (Titsias 2009) as one computation.

The power-EP family of Bui, Yan & Turner (2017), as written in Reeb et al. (2018, App. D, eq. 34 and
eq. 11) with alpha in [0, 1]:

    F_alpha = -log N(y | 0, Qff + alpha * diag(Kff - Qff) + noise * I)
              + (1 - alpha) / (2 alpha) * sum_i log(1 + alpha * lambda_i / noise),

    lambda_i = k(x_i, x_i) - Q_ii,   Qff = Kfu Kuu^{-1} Kuf.

alpha = 1 is FITC (Snelson & Ghahramani 2006: the trace term vanishes); alpha -> 0 is VFE, the negative
Titsias bound -log N(y | 0, Qff + noise I) + sum_i lambda_i / (2 noise). The optimal / implied q(u) is
N(a_M, B_MM) with Q_MM = Kuu + Kuf D^{-1} Kfu, D = alpha Lambda + noise I (Reeb et al. eq. 11):
a_M = Kuu Q_MM^{-1} Kuf D^{-1} y, B_MM = Kuu Q_MM^{-1} Kuu; predictions project it through p(f|u).

Everything is a function of Kuu, Kuf, diag Kff, the noise variance and y, so other objectives (PAC-GP)
can reuse it. Numerics: one Cholesky of Kuu + jitter I (the caller chooses the jitter, see
`default_jitter`) and one of B = I + A D^{-1} A^T (A = L^{-1} Kuf), whose eigenvalues are >= 1, so
it never needs jitter; no matrix is inverted explicitly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..gpmath.cholesky import jittered_cholesky
from . import fused_rbf

# Kuu's Cholesky jitter, relative to the mean of its diagonal (the prior variance).
RELATIVE_JITTER = {torch.float64: 1e-6, torch.float32: 1e-4}


def default_jitter(Kuu: torch.Tensor) -> torch.Tensor:
    return RELATIVE_JITTER.get(Kuu.dtype, 1e-4) * Kuu.diagonal().mean()


def fused_rbf_stats(kernel, Z, X, y, block: int = fused_rbf.BLOCK):
    """(L = chol(Kuu + jitter), its identity, P = A A^T, A y) with A = L^-1 K_uf, the statistics both the SGPR bound
    (vfe_from_stats) and the square-loss DLM objective (objectives/sq_dlm.sq_dlm_from_stats) need, through
    fused_rbf.CollapsedRBFStats (an RBF kernel on the CPU: fused_rbf.supports_fused_rbf). Kuu, its jitter and
    Cholesky are the plain paths' calls."""
    Kuu = kernel(Z).to_dense()
    L, eye = jittered_cholesky(Kuu, default_jitter(Kuu))
    P, Ay = fused_rbf.CollapsedRBFStats.apply(X, Z, kernel.base_kernel.lengthscale, kernel.outputscale, L, y, block)
    return L, eye, P, Ay


@dataclass
class CollapsedTerms:
    L: torch.Tensor  # chol(Kuu + jitter I)
    A: torch.Tensor | None  # L^{-1} Kuf (M x N); None from collapsed_terms_blocked
    lam: torch.Tensor  # lambda_i = Kff_ii - Q_ii (>= 0)
    d: torch.Tensor  # alpha * lambda + noise
    LB: torch.Tensor  # chol(I + A D^{-1} A^T)
    c: torch.Tensor  # LB^{-1} A D^{-1} y
    y: torch.Tensor
    noise: torch.Tensor
    alpha: float


def collapsed_terms(Kuu, Kuf, kff_diag, noise, y, alpha: float = 1.0, jitter=0.0) -> CollapsedTerms:
    """The terms of all N points as one block (`_blocked`), with A = L^{-1} Kuf kept."""
    t, As = _blocked(Kuu, [(Kuf, kff_diag, y)], noise, alpha, jitter, keep_A=True)
    t.A = As[0]
    return t


def collapsed_terms_blocked(Kuu, blocks, noise, alpha: float = 1.0, jitter=0.0) -> CollapsedTerms:
    """`collapsed_terms` with Kuf, diag Kff and y given as blocks of the N points (an iterable of (Kuf_b, kff_b, y_b),
    e.g. a generator that evaluates the kernel block by block). The same operations on each block's columns, the
    M x M products A D^-1 A^T and A D^-1 y summed over the blocks: equal to `collapsed_terms` to rounding
    (tests/unit/models/test_collapsed_fast_path.py). Why: every elementwise step on an M x N array (the kernel's, lambda's,
    the D^-1/2 scaling, and their backward) streams it through memory; on blocks of a few thousand columns it stays
    in cache (models/sgpr.py uses it for the training loss). The returned terms have A = None (no M x N matrix is
    kept); everything else is as `collapsed_terms` returns it."""
    return _blocked(Kuu, blocks, noise, alpha, jitter)[0]


def kernel_blocks(kernel, Z, X, y, block: int):
    """(Kuf_b, diag Kff_b, y_b) for the row blocks of X: the input of `collapsed_terms_blocked` and
    `blocked_terms_and_marginals`. K_uf's block is evaluated as K(X_b, Z) and transposed: a column-major view, which
    LAPACK's triangular solve takes without the copy a row-major K(Z, X_b) costs (measured: 9 % of a step at
    N = 5000, M = 200). The kernel is symmetric, so the values are the same to rounding (GPyTorch centres the squared
    distances on the first argument's mean)."""
    return ((kernel(Xb, Z).to_dense().mT, kernel(Xb, diag=True), yb) for Xb, yb in zip(X.split(block), y.split(block)))


def blocked_terms_and_marginals(Kuu, blocks, noise, alpha: float = 1.0, jitter=0.0):
    """(terms, mean, var): `collapsed_terms_blocked` and then `predict_at_inputs` block by block (a second pass over
    the kept blocks of A = L^{-1} Kuf for LB^{-1} A, once LB is known). Equal to `predict_at_inputs(collapsed_terms(...))`
    to rounding (tests/unit/models/test_collapsed_fast_path.py). Why: PAC-SGP's training loss needs q(f) at every
    training point; all at once its M x N elementwise steps run out of cache (models/pac_gp.py; docs/performance.md:
    0.70 of the all-at-once loss + gradient at N = 32000, M = 500)."""
    t, As = _blocked(Kuu, blocks, noise, alpha, jitter, keep_A=True)
    return t, *_marginals_at_inputs(t, As)


def _blocked(Kuu, blocks, noise, alpha: float, jitter, keep_A: bool = False):
    """The terms from the blocks of the N points: each block's A = L^{-1} Kuf_b, lambda and D^{-1/2} scaling, the
    M x M sums A D^{-1} A^T and A D^{-1} y over the blocks; also the blocks' A when `keep_A`."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    L, eye = jittered_cholesky(Kuu, jitter)
    AAt, Ay, lams, ds, ys, As = 0.0, 0.0, [], [], [], []
    for Kuf, kff_diag, y in blocks:
        A = torch.linalg.solve_triangular(L, Kuf, upper=False)
        lam = (kff_diag - A.square().sum(0)).clamp_min(0.0)
        d = alpha * lam + noise
        Aw = A / d.sqrt()
        AAt = AAt + Aw @ Aw.T
        Ay = Ay + Aw @ (y / d.sqrt())
        lams.append(lam), ds.append(d), ys.append(y)
        if keep_A:
            As.append(A)
    LB = torch.linalg.cholesky(eye + AAt)
    c = torch.linalg.solve_triangular(LB, Ay.unsqueeze(-1), upper=False).squeeze(-1)
    return CollapsedTerms(L, None, torch.cat(lams), torch.cat(ds), LB, c, torch.cat(ys), noise, alpha), As


def vfe_from_stats(P, v, kff_sum, yy, noise, n: int) -> torch.Tensor:
    """F_0 (the negative Titsias bound, a sum over the N points) from the data statistics P = A A^T, v = A y
    (A = L^-1 Kuf), sum_i Kff_ii and y^T y: with D = noise I, A D^-1 A^T = P / noise, A D^-1 y = v / noise and
    sum_i lambda_i = sum_i Kff_ii - tr P; the same operations as `neg_log_marginal` on `collapsed_terms(alpha=0)`
    from there (LB = chol(I + P / noise), c = LB^-1 v / noise). Why: models/fused_rbf.CollapsedRBFStats returns
    only these statistics, so its backward avoids every N-sized solve (see there). Equal to `neg_log_marginal` to
    rounding (tests/unit/models/test_fused_rbf.py); the per-point clamp lambda_i >= 0 is not applied (lambda_i < 0
    only by rounding, and only its sum enters F_0)."""
    M = P.shape[-1]
    eye = torch.eye(M, dtype=P.dtype, device=P.device)
    LB = torch.linalg.cholesky(eye + P / noise)
    c = torch.linalg.solve_triangular(LB, (v / noise).unsqueeze(-1), upper=False).squeeze(-1)
    logdet = n * torch.log(noise) + 2.0 * LB.diagonal().log().sum()
    quad = yy / noise - c.square().sum()
    trace = 0.5 * (kff_sum - P.diagonal().sum()) / noise
    return 0.5 * (n * math.log(2 * math.pi) + logdet + quad) + trace


def neg_log_marginal(t: CollapsedTerms) -> torch.Tensor:
    """F_alpha (a sum over the N points, not a mean)."""
    n = t.y.shape[0]
    logdet = t.d.log().sum() + 2.0 * t.LB.diagonal().log().sum()
    quad = (t.y.square() / t.d).sum() - t.c.square().sum()
    nlml = 0.5 * (n * math.log(2 * math.pi) + logdet + quad)
    if t.alpha == 0.0:
        trace = 0.5 * t.lam.sum() / t.noise
    elif t.alpha < 1.0:
        trace = (1.0 - t.alpha) / (2.0 * t.alpha) * torch.log1p(t.alpha * t.lam / t.noise).sum()
    else:
        trace = 0.0
    return nlml + trace


def q_u(t: CollapsedTerms) -> tuple[torch.Tensor, torch.Tensor]:
    """(a_M, R) with q(u) = N(a_M, R R^T): a_M = L LB^{-T} c, B_MM = L B^{-1} L^T."""
    R = torch.linalg.solve_triangular(t.LB, t.L.T, upper=False).T  # L LB^{-T}
    return R @ t.c, R


def predict(t: CollapsedTerms, Kus: torch.Tensor, kss_diag: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and variance of q(f*) = int p(f*|u) q(u) du (without the noise): with a* = L^{-1} Ku*,
    mean = (LB^{-1} a*)^T c and var = k** - |a*|^2 + |LB^{-1} a*|^2."""
    a = torch.linalg.solve_triangular(t.L, Kus, upper=False)
    b = torch.linalg.solve_triangular(t.LB, a, upper=False)
    mean = b.T @ t.c
    var = (kss_diag - a.square().sum(0) + b.square().sum(0)).clamp_min(0.0)
    return mean, var


def predict_at_inputs(t: CollapsedTerms) -> tuple[torch.Tensor, torch.Tensor]:
    """`predict` at the N points the terms were built from, reusing A = L^{-1} Kuf and lambda = k - |a|^2:
    mean = (LB^{-1} A)^T c, var = lambda + |LB^{-1} A|^2. Why: PAC-SGP's training loss needs q(f) at the
    training points every step; `predict` would evaluate Kuf (and its backward) and the M x N solve again
    (measured: a quarter of a loss-and-gradient step at N = 3000, M = 500, docs/performance.md)."""
    if t.A is None:
        raise ValueError("predict_at_inputs needs the terms of collapsed_terms (collapsed_terms_blocked keeps no A)")
    return _marginals_at_inputs(t, [t.A])


def _marginals_at_inputs(t: CollapsedTerms, As: list) -> tuple[torch.Tensor, torch.Tensor]:
    """mean = (LB^{-1} A)^T c and var = lambda + |LB^{-1} A|^2 over the column blocks `As` of A."""
    means, variances = [], []
    for A, lam in zip(As, t.lam.split([A.shape[-1] for A in As])):
        b = torch.linalg.solve_triangular(t.LB, A, upper=False)
        means.append(b.T @ t.c)
        variances.append((lam + b.square().sum(0)).clamp_min(0.0))
    return torch.cat(means), torch.cat(variances)
