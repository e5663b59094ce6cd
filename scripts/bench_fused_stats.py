"""Benchmark: one loss-and-gradient evaluation (the work of an Adam step) of a model whose loss needs only the data
statistics P = A A^T and A y of A = L^-1 K_uf: square-loss DLM (`--method sq_dlm`, the default) or the collapsed SGPR
bound (`--method sgpr`), at the DLM Suppl. Figs. 1-2 pol size: pol-shaped synthetic data (N = 3000, D = 26), M = 100,
SE-ARD, float64, one thread unless --threads. The fused path (the bundle's `fast`: P and A y from
models/fused_rbf.CollapsedRBFStats, at every N since 2026-12-07) against the plain one (fast=False), same model state,
interleaved rounds, process CPU time, median. Both give the same loss and gradient to rounding (checked here and by
tests/unit/models/test_fused_rbf.py).
"""

from __future__ import annotations

import benchkit
import entry


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"rounds": 1, "reps": 1, "n": 300, "m": 20})
    ap.add_argument("--method", choices=("sq_dlm", "sgpr"), default="sq_dlm")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3, help="evaluations per round")
    ap.add_argument("--n", type=int, default=3000, help="points")
    ap.add_argument("--m", type=int, default=100, help="inducing points")
    args = benchkit.parse(ap, argv)
    bundle, X, y = benchkit.synthetic_bundle(["experiment=dlm_supp_pol", "dataset=pol", f"method={args.method}",
                                              f"model.num_inducing={args.m}"], args.n, 26)
    bundle.train()
    fused_s, plain_s = benchkit.compared(benchkit.loss_with("fast", True), benchkit.loss_with("fast", False),
                                         bundle, X, y, args.rounds, args.reps)
    print(f"{args.method} loss + gradient (N={args.n}, D=26, M={args.m}, SE-ARD): {fused_s * 1e3:.1f} ms fused, "
          f"{plain_s * 1e3:.1f} ms plain (CPU)")
    return fused_s / plain_s, fused_s


if __name__ == "__main__":
    entry.run(main)
