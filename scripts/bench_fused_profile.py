"""Where a fused SVGP / SGPR step's time goes (issue 57, docs/performance.md "Round 3"): the N-sized operations of
models/fused_rbf.py's forward and backward, called outside autograd on the benchmark's shapes (synthetic data, Z
inside X), timed per operation and summed over the blocks, with each one's flop count and fraction of this core's
dgemm peak (numpy 1000^3 in the same process). Then MKL's triangular solve against the block substitution and a
GEMM at the same shape. One thread. `python scripts/bench_fused_profile.py`."""
import collections
import time

import numpy as np
import torch

import benchkit
import entry
from dlm_bench.models.fused_rbf import BlockedLower, rbf_block, rbf_grads, scaled_inputs

T = collections.defaultdict(float)  # seconds per operation, summed over blocks and steps
F = collections.defaultdict(float)  # flops per operation


def tm(name, flops, f, *a):
    t = time.perf_counter()
    r = f(*a)
    T[name] += time.perf_counter() - t
    F[name] += flops
    return r


F64 = torch.float64


def setup(N, M, D, seed=0):
    """Synthetic inputs, Z = the first M of them, unit lengthscales and outputscale, chol(K_ZZ + 1e-6 I)."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(N, D, generator=g, dtype=F64)
    Z = X[:M].clone()
    xs, zs = scaled_inputs(X, Z, torch.ones(1, D, dtype=F64))
    L = torch.linalg.cholesky(torch.exp(-0.5 * torch.cdist(Z, Z) ** 2) + 1e-6 * torch.eye(M, dtype=F64))
    return g, xs, zs, 0.5 * zs.square().sum(-1), torch.tensor(0.0, dtype=F64), L


def svgp(N=10000, M=100, D=8, block=2048):
    """WhitenedRBFPredictive's forward and backward, operation by operation."""
    g, xs, zs, zn, log_os, L = setup(N, M, D)
    middle = 0.01 * torch.eye(M, dtype=F64)
    m = torch.randn(M, generator=g, dtype=F64)
    tri = tm("M^3 setup (diag-block inverses)", M**3 / 3, BlockedLower, L)
    saved = []
    for xb in xs.split(block):
        n = xb.shape[0]
        K = tm("fwd kernel (bias+GEMM K=D, clamp, exp)", 2 * M * n * D, rbf_block, zs, zn, xb, log_os)
        A = tm("fwd A = L^-1 K (block substitution)", M * M * n, tri.solve, K)
        B = tm("fwd (S-I) A  GEMM", 2 * M * M * n, torch.mm, middle, A)
        tm("fwd A^T m, colsum(A*B)", 4 * M * n, lambda: (A.mT @ m, (A * B).sum(0)))
        saved.append((K, A, xb))
    P = torch.linalg.solve_triangular(L.mT, middle, upper=True)
    q = torch.linalg.solve_triangular(L.mT, m[:, None], upper=True)[:, 0]
    acc = [0, 0, 0, 0]
    dm, dmid = torch.zeros(M, dtype=F64), torch.zeros(M, M, dtype=F64)
    for K, A, xb in saved:
        n = xb.shape[0]
        dmean, dvar = torch.randn(n, generator=g, dtype=F64), torch.randn(n, generator=g, dtype=F64)
        Ad = tm("bwd A*dvar, A dmean", 3 * M * n, lambda: (A * dvar, dm.add_(A @ dmean))[0])
        tm("bwd d(S-I) += Ad A^T  GEMM", 2 * M * M * n, lambda: dmid.add_(Ad @ A.mT))
        dK = tm("bwd dK = 2 L^-T(S-I) Ad + q dmean^T  GEMM", 2 * M * M * n,
                lambda: torch.addmm(torch.outer(q, dmean), P, Ad, alpha=2.0))
        tm("bwd kernel (H = dK*K, sums, H X GEMM K=D)", 2 * M * n * D + 3 * M * n,
           lambda: rbf_grads(dK.mul_(K), zs, xb, acc))


def sgpr(N=5000, M=200, D=8, block=2048):
    """CollapsedRBFStats's forward and backward, operation by operation."""
    g, xs, zs, zn, log_os, L = setup(N, M, D)
    y = torch.randn(N, generator=g, dtype=F64)
    tri = tm("M^3 setup (diag-block inverses)", M**3 / 3, BlockedLower, L)
    P, v, saved = torch.zeros(M, M, dtype=F64), torch.zeros(M, dtype=F64), []
    for xb, yb in zip(xs.split(block), y.split(block)):
        n = xb.shape[0]
        K = tm("fwd kernel (bias+GEMM K=D, clamp, exp)", 2 * M * n * D, rbf_block, zs, zn, xb, log_os)
        A = tm("fwd A = L^-1 K (block substitution)", M * M * n, tri.solve, K)
        tm("fwd P += A A^T  GEMM", 2 * M * M * n, lambda: P.addmm_(A, A.mT))
        tm("fwd v += A y", 2 * M * n, lambda: v.addmv_(A, yb))
        saved.append((K, A, xb, yb))
    V, w, acc = torch.randn(M, M, generator=g, dtype=F64), torch.randn(M, generator=g, dtype=F64), [0, 0, 0, 0]
    for K, A, xb, yb in saved:
        n = xb.shape[0]
        dK = tm("bwd dK = V A + w y^T  GEMM", 2 * M * M * n, lambda: torch.addmm(torch.outer(w, yb), V, A))
        tm("bwd kernel (H = dK*K, sums, H X GEMM K=D)", 2 * M * n * D + 3 * M * n,
           lambda: rbf_grads(dK.mul_(K), zs, xb, acc))


def solves(n_scale=1.0, window=0.1):
    """L^-1 K three ways: MKL's dtrsm, the block substitution, and (for scale) a dgemm of the same shape."""
    for M, n in ((100, int(2048 * n_scale)), (200, int(2048 * n_scale)), (200, int(5000 * n_scale))):
        g = torch.Generator().manual_seed(0)
        B = torch.randn(M, M, generator=g, dtype=F64)
        L = torch.linalg.cholesky(B @ B.T + M * torch.eye(M, dtype=F64))
        K = torch.randn(M, n, generator=g, dtype=F64)
        tri = BlockedLower(L)
        calls = {"MKL dtrsm": (1, lambda: torch.linalg.solve_triangular(L, K, upper=False)),
                 "block substitution": (1, lambda: tri.solve(K)), "dgemm (M x M) @ (M x n)": (2, lambda: L @ K)}
        rates = {k: c * M * M * n / benchkit.best_seconds(f, window=window) for k, (c, f) in calls.items()}
        print(f"L^-1 K, M={M} n={n} (M^2 n flops; dgemm 2 M^2 n): "
              + ", ".join(f"{k} {v / 1e9:.1f}" for k, v in rates.items()) + " GFLOP/s")


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"reps": 1, "n_scale": 0.05, "window": 0.001})
    ap.add_argument("--reps", type=int, default=10, help="steps per profile")
    ap.add_argument("--n-scale", type=float, default=1.0, help="scales every N (SVGP 10000, SGPR 5000, the solves')")
    ap.add_argument("--window", type=float, default=0.1, help="seconds per repeat of the solve microbenchmarks")
    args = benchkit.parse(ap, argv)
    pk = benchkit.dgemm_gflops(np.dot, np.random.default_rng(0).standard_normal((1000, 1000)))
    totals = {}
    n_svgp, n_sgpr = int(10000 * args.n_scale), int(5000 * args.n_scale)
    for name, fn in ((f"(a) SVGP N={n_svgp} M=100 D=8", lambda: svgp(N=n_svgp)),
                     (f"(b) SGPR N={n_sgpr} M=200 D=8", lambda: sgpr(N=n_sgpr))):
        fn()  # warm-up
        T.clear()
        F.clear()
        for _ in range(args.reps):
            fn()
        tot, ftot = sum(T.values()) / args.reps, sum(F.values()) / args.reps
        totals[name] = tot
        print(f"{name}: numpy dgemm 1000^3 peak now {pk:.1f} GFLOP/s; N-sized work per step {tot * 1e3:.1f} ms, "
              f"{ftot / 1e6:.0f} Mflop, {ftot / tot / 1e9:.1f} GFLOP/s = {ftot / tot / 1e9 / pk:.0%} of peak")
        for k in T:
            t, f = T[k] / args.reps, F[k] / args.reps
            print(f"   {k:48s} {t * 1e3:7.2f} ms {100 * t / tot:5.1f} %  {f / 1e6:7.1f} Mflop  {f / t / 1e9:5.1f} "
                  f"GFLOP/s  {f / t / 1e9 / pk:4.0%} of peak")
    solves(args.n_scale, args.window)
    return totals


if __name__ == "__main__":
    entry.run(main)
