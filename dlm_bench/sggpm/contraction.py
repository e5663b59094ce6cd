"""Contraction test of the fixed-point operator (Sheth, Wang & Khardon 2015, Sec. 4.1, Fig. 1 and supplement Fig. 1).

T(V) = (K_M^-1 - K_M^-1 K_MN diag(lambda) K_NM K_M^-1)^-1   (eq. 13)

with lambda_i = E_q[d^2 log p(y_i | f_i) / df_i^2] = 2 d E_q[log p(y_i | f_i)] / d v_i at the marginals of
q(f_U) = N(m, V) (eqs. 3a-b) and m held fixed: by default at the prior mean m_U (0 for the zero-mean GP, 1 for the
polynomial kernel's constant mean; `m_at="mode"`: the Newton mode of the VLB at V = K_M). The paper says neither which
m it used nor whether the 1000 inputs are the data (`data="all"`) or only U is (`data="active"`, the SoD operator);
docs/reproductions/sggpm_fig1_smoke/README.md compares the readings.

One repetition (paper L156-165, choices the paper leaves open are marked *):
  * 1000 iid inputs uniform on [0, 1]^10; the active set U is the first M of them (nested over M), X is all 1000;
  * latent f ~ GP(mean, K) at X (one draw per repetition and kernel), y simulated from each likelihood:
    count: Poisson(exp f); binary: logistic, y in {-1, +1}; ordinal: cumulative logit with upstream's init_hyps
    thresholds for 5 levels (phi = -1, -1/3, 1/3, 1) and slope 50;
  * one random pair 0 <= U, V <= K_M (Loewner) per M: U = L Q diag(s) Q^T L^T, K_M = L L^T (K_M + 1e-7 I, upstream's
    jitter), Q Haar-orthogonal, s ~ Uniform(0, 1)^M, so 0 <= Q diag(s) Q^T <= I;
  ratio = ||T(U) - T(V)||_2 / ||U - V||_2 (spectral norms).
Kernels: RBF ell = sqrt(10)/3 (main text; the supplement's caption says sqrt(3): `ell`), sf2 = 1; Matern-1/2 with the
same ell; polynomial of degree 2, (x^T x' / ell^2 + 1)^2, with constant mean 1.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..gpmath.cholesky import grown_cholesky
from ..gpmath.sites import LogisticSite, OrdinalSite, PoissonSite
from .model import GGPM, Hyp, kernel, sparse_model

LIKELIHOODS = ("count", "binary", "ordinal")
KERNELS = ("se", "matern12", "poly2")
SIZES = (5, 10, 50, 100)
ELL_MAIN = math.sqrt(10) / 3
ELL_SUPP = math.sqrt(3)
ORDINAL_THRESHOLDS = (-1.0, -1 / 3, 1 / 3, 1.0)  # init_hyps for 5 levels: phi_1 = -1, gaps 2 / (L - 2)
ORDINAL_SLOPE = 50.0


def prior_mean(kern: str) -> float:
    return 1.0 if kern == "poly2" else 0.0


def make_site(lik: str, num_nodes: int = 20, thresholds=ORDINAL_THRESHOLDS, slope: float = ORDINAL_SLOPE):
    if lik == "count":
        return PoissonSite()
    if lik == "binary":
        return LogisticSite(num_nodes)
    if lik == "ordinal":
        return OrdinalSite(list(thresholds), slope, max(num_nodes, 20))
    raise ValueError(f"unknown likelihood {lik!r}")


def simulate_y(lik: str, f: torch.Tensor, gen: torch.Generator, thresholds=ORDINAL_THRESHOLDS,
               slope: float = ORDINAL_SLOPE) -> torch.Tensor:
    if lik == "count":
        return torch.poisson(torch.exp(f), generator=gen)
    u = torch.rand(f.shape, generator=gen, dtype=f.dtype)
    if lik == "binary":
        return torch.where(u < torch.sigmoid(f), 1.0, -1.0).to(f.dtype)
    if lik == "ordinal":
        th = torch.as_tensor(thresholds, dtype=f.dtype)
        cdf = torch.sigmoid(slope * (th[None, :] - f[:, None]))  # P(y <= k), k = 1..L-1
        return 1.0 + (u[:, None] > cdf).sum(1).to(f.dtype)
    raise ValueError(f"unknown likelihood {lik!r}")


def haar_orthogonal(M: int, gen: torch.Generator, dtype=torch.float64) -> torch.Tensor:
    Q, R = torch.linalg.qr(torch.randn(M, M, generator=gen, dtype=dtype))
    return Q * torch.sign(torch.diagonal(R))[None, :]


def loewner_sample(L: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A random U with 0 <= U <= K_M = L L^T: L Q diag(s) Q^T L^T, s ~ U(0, 1)."""
    M = L.shape[0]
    Q = haar_orthogonal(M, gen, L.dtype)
    s = torch.rand(M, generator=gen, dtype=L.dtype)
    B = L @ Q
    U = (B * s) @ B.T
    return 0.5 * (U + U.T)


def operator(X, Z, y, site, kern: str, ell: float, sf2: float = 1.0, mean: float = 0.0) -> GGPM:
    """The pieces of eq. 13 for one (X, U, y, kernel): the sparse GGPM of model.py, with L_M (K_M = L L^T), D (rows
    d_i^T = k_iM K_M^-1), a, c and the prior mean mu = m_U."""
    return sparse_model(X, y, Z, site, Hyp(ell, sf2, mean, kernel=kern))


def lam(op: GGPM, V, m=None):
    m = op.mu if m is None else m
    mq = op.a + op.D @ m
    vq = (op.c + ((op.D @ V) * op.D).sum(1)).clamp_min(1e-12)
    return op.site.site_expectations(op.y, mq, vq)[2]


def T(op: GGPM, V, m=None):
    """(K_M^-1 - D^T diag(lambda) D)^-1 = L (I + L^T D^T diag(-lambda) D L)^-1 L^T (lambda <= 0): the LGM's
    fixed-point update at gamma = -lambda."""
    return op.fixed_point_update(-lam(op, V, m)).V


def newton_mode(op: GGPM, V, iters: int = 100, tol: float = 1e-10):
    """argmax_m VLB(m, V) (concave in m for log-concave sites) by Newton with step halving:
    g = D^T rho - K_M^-1 (m - m_U), H = D^T diag(lambda) D - K_M^-1."""
    Ki = torch.cholesky_inverse(op.L_M)
    vq = (op.c + ((op.D @ V) * op.D).sum(1)).clamp_min(1e-12)

    def f(m):
        E, rho, lam = op.site.site_expectations(op.y, op.a + op.D @ m, vq)
        r = m - op.mu
        return float(E.sum() - 0.5 * r @ Ki @ r), rho, lam

    m = op.mu.clone()
    F, rho, lam = f(m)
    for _ in range(iters):
        step = torch.linalg.solve((op.D.T * lam) @ op.D - Ki, op.D.T @ rho - Ki @ (m - op.mu))
        t = 1.0
        for _ in range(50):
            Fn, rn, ln = f(m - t * step)
            if Fn >= F - 1e-9 * (1 + abs(F)):  # the sites are exact to ~1e-9 (adaptive quadrature)
                break
            t *= 0.5
        m, F, rho, lam = m - t * step, Fn, rn, ln
        if float((t * step).abs().max()) < tol:
            break
    return m


def spectral(A: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(A, ord=2))


def pair_ratio(op: GGPM, gen: torch.Generator, m=None, keep=None):
    """(||U - V||_2, ||T(U) - T(V)||_2) for one random pair; keep: a list that gets (op, m, U, V)."""
    U, V = loewner_sample(op.L_M, gen), loewner_sample(op.L_M, gen)
    du = spectral(U - V)
    dt = spectral(T(op, U, m) - T(op, V, m))
    if keep is not None:
        keep.append((op, m, U, V))
    return du, dt


def run(*args, **kwargs):
    """`_rows` in float64, with torch's default dtype put back afterwards (it is process-wide: leaving it at float64
    changed the dtype of every later tensor in the same process, e.g. a test worker's)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return _rows(*args, **kwargs)
    finally:
        torch.set_default_dtype(old)


def _rows(reps: int = 500, sizes=SIZES, likelihoods=LIKELIHOODS, kernels=KERNELS, ell: float = ELL_MAIN,
          n: int = 1000, dim: int = 10, seed: int = 0, num_nodes: int = 20, m_at: str = "prior",
          data: str = "all", progress=None, keep=None, poly_sf2: float = 1.0):
    """Rows (lik, kernel, M, rep, ||U - V||_2, ||T(U) - T(V)||_2).
    poly_sf2: the polynomial kernel's scale sf2 (GPML covPoly's sf^2 (c + x'z)^2; the caption prints none and its axes
    put the paper's poly K_M some 20-40x below ours at 1, docs/reproductions/sggpm_fig1_smoke).
    m_at: "prior" (m = m_U) or "mode" (Newton mode of the VLB at V = K_M); data: "all" (X = the n inputs) or
    "active" (X = U, the SoD operator: T(V) = (K_M^-1 + diag(-lambda))^-1); keep: see pair_ratio."""
    if m_at not in ("prior", "mode") or data not in ("all", "active"):
        raise ValueError(f"m_at must be prior|mode, data all|active; got {m_at!r}, {data!r}")
    gen = torch.Generator().manual_seed(seed)
    sites = {lik: make_site(lik, num_nodes) for lik in likelihoods}
    rows = []
    for rep in range(reps):
        X = torch.rand(n, dim, generator=gen, dtype=torch.float64)
        for kern in kernels:
            mean = prior_mean(kern)
            sf2 = poly_sf2 if kern == "poly2" else 1.0
            K = kernel(kern, X, X, ell, sf2)
            Lf = grown_cholesky(K, 1e-8 * float(K.diagonal().mean()))
            f = mean + Lf @ torch.randn(n, generator=gen, dtype=torch.float64)
            for lik in likelihoods:
                y = simulate_y(lik, f, gen)
                for M in sizes:
                    N = n if data == "all" else M
                    op = operator(X[:N], X[:M], y[:N], sites[lik], kern, ell, sf2, mean)
                    m = newton_mode(op, op.L_M @ op.L_M.T) if m_at == "mode" else None
                    du, dt = pair_ratio(op, gen, m, keep)
                    rows.append((lik, kern, M, rep, du, dt))
        if progress:
            progress(rep)
    return rows


def summary(rows):
    """{(lik, kernel, M): (pairs, fraction with ratio > 1, max ratio, median ratio)}."""
    out = {}
    keys = sorted({r[:3] for r in rows}, key=lambda k: (LIKELIHOODS.index(k[0]), KERNELS.index(k[1]), k[2]))
    for k in keys:
        r = np.array([row[5] / row[4] for row in rows if row[:3] == k])
        out[k] = (len(r), float((r > 1).mean()), float(r.max()), float(np.median(r)))
    return out
