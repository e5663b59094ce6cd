"""Benchmark: one kl-PAC-SGP loss-and-gradient evaluation (what L-BFGS calls about twice an iteration) at the
PAC Table 2 size: pol-shaped synthetic data (N = 3000, D = 26), M = 500, SE-ARD, FITC q(u), float64, one
thread unless --threads. Two ways to get q(f) at the training points, same model state, interleaved rounds:

- `predict_at_inputs`: reuses L^{-1} Kuf and lambda from the collapsed terms (models/collapsed.py; what the
  loss does since 2026-11-25);
- `predict`: evaluates Kuf and diag Kff again and solves L^{-1} Kuf a second time (the loss before).

`--blocked` times instead the loss through the points in blocks of 2048 (PacSGPBundle.fast, collapsed.
blocked_terms_and_marginals; the loss since 2026-12-05 from N = 4096 on) against all of them at once (fast=False), at
PAC Table 3's kin40k size: kin40k-shaped synthetic data (N = 32000, D = 8), M = 500, SE-ARD, FITC q(u).

`--full` times instead the full kl-PAC-GP loss (models/pac_gp.PacGPBundle) at PAC Fig. 8's size (App. F: N = 2000,
D = 3, SE-ARD): log det C, diag(C^{-1}) and C^{-1} y through gpmath/inverse_terms.py's closed-form backward (the loss
since 2026-12-07) against autograd through the Cholesky and the triangular inverse (the loss before).

Both give the same loss and gradient to rounding (checked here and by tests/unit/models/test_collapsed.py,
tests/unit/gpmath/test_inverse_terms.py). Timed in process CPU time, median over rounds.
"""

from __future__ import annotations

import benchkit
import entry
import torch
from dlm_bench.gpmath.cholesky import jittered_cholesky
from dlm_bench.models import collapsed
from dlm_bench.pac.kl import kl_collapsed


def blocked_vs_plain(n=32000, m=500, rounds=3):
    """(blocked / all-at-once CPU time, blocked seconds) of one loss + gradient, interleaved rounds, median."""
    bundle, X, y = benchkit.synthetic_bundle(["experiment=pac_table3", "dataset=kin40k", "method=kl_pac_sgp",
                                              f"model.num_inducing={m}"], n, 8)
    bundle.train()

    b_s, p_s = benchkit.compared(benchkit.loss_with("fast", True), benchkit.loss_with("fast", False), bundle, X, y,
                                 rounds, 1)
    print(f"kl-PAC-SGP loss + gradient (N={n}, D=8, M={m}, SE-ARD): {b_s * 1e3:.0f} ms in blocks of "
          f"{bundle.BLOCK}, {p_s * 1e3:.0f} ms all at once (CPU)")
    return b_s / p_s, b_s


def full_gp_loss_via_autograd(bundle, X, y):
    """The full PAC-GP loss as it was: diag(C^{-1}) from the triangular inverse, gradients by autograd."""
    K = bundle.kernel(X).to_dense()
    s2 = bundle.noise
    Lc, eye = jittered_cholesky(K, s2)
    alpha = torch.cholesky_solve(y.unsqueeze(-1), Lc).squeeze(-1)
    cinv_diag = torch.linalg.solve_triangular(Lc, eye, upper=False).square().sum(0)
    n = K.shape[-1]
    kl = 0.5 * (2.0 * Lc.diagonal().log().sum() - n * torch.log(s2) - (n - s2 * cinv_diag.sum()) + alpha @ (K @ alpha))
    return bundle.objective(y, K @ alpha, (s2 * (1 - s2 * cinv_diag)).clamp_min(0.0), kl)


def full_vs_autograd(n=2000, rounds=3, reps=1):
    """(closed-form / autograd CPU time, closed-form seconds) of one full kl-PAC-GP loss + gradient."""
    bundle, X, y = benchkit.synthetic_bundle(["experiment=pac_appF"], n, 3)
    bundle.train()
    new_s, old_s = benchkit.compared(type(bundle).loss, full_gp_loss_via_autograd, bundle, X, y, rounds, reps)
    print(f"kl-PAC-GP loss + gradient (N={n}, D=3, SE-ARD): {new_s * 1e3:.0f} ms closed-form backward, "
          f"{old_s * 1e3:.0f} ms autograd (CPU)")
    return new_s / old_s, new_s


def loss_via_predict(bundle, X, y):
    """The loss as it was: q(f) at the training points through `collapsed.predict` (Kuf evaluated again)."""
    t = bundle.terms(X, y)
    mean, var = collapsed.predict(t, bundle.kernel(bundle.Z, X).to_dense(), bundle.kernel(X, diag=True))
    return bundle.objective(y, mean, var, kl_collapsed(t))


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"rounds": 1, "reps": 1, "n": 300, "m": 20})
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3, help="evaluations per round")
    ap.add_argument("--n", type=int, default=None, help="points (default 3000; 32000 with --blocked)")
    ap.add_argument("--m", type=int, default=500, help="inducing points")
    ap.add_argument("--blocked", action="store_true", help="blocks vs all at once at kin40k size (default --n 32000)")
    ap.add_argument("--full", action="store_true", help="the full kl-PAC-GP at App. F size (default --n 2000)")
    args = benchkit.parse(ap, argv)
    if args.full:
        return full_vs_autograd(n=args.n or 2000, rounds=args.rounds, reps=args.reps)
    if args.blocked:  # the smoke size still takes two blocks
        return blocked_vs_plain(n=max(args.n or 32000, 4096), m=args.m, rounds=args.rounds)
    args.n = args.n or 3000
    bundle, X, y = benchkit.synthetic_bundle(["experiment=pac_table2", "dataset=pol", "model.ard=true",
                                              f"model.num_inducing={args.m}", "method=kl_pac_sgp"], args.n, 26)
    bundle.train()
    new_s, old_s = benchkit.compared(type(bundle).loss, loss_via_predict, bundle, X, y, args.rounds, args.reps)
    print(f"kl-PAC-SGP loss + gradient (N={args.n}, D=26, M={args.m}, SE-ARD): {new_s * 1e3:.0f} ms with "
          f"predict_at_inputs, {old_s * 1e3:.0f} ms through predict (CPU)")
    return new_s / old_s, new_s


if __name__ == "__main__":
    entry.run(main)
