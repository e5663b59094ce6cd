"""Benchmark: ms per training iteration of a Student-t DLM step (issue 26).

The likelihood term log E_q[p(y|f)] of the Student-t has no closed form (`estimator=exact` runs the
deterministic quadrature of likelihoods/quadrature/), so this times exactly the code the likelihood layer
owns: SVGP (M = 50) on the shipped boston data (all training rows, full batch), objective=dlm,
model.likelihood=student_t; one iteration = loss + backward + Adam step, float64, one thread unless
--threads. Median over interleaved rounds after a short warm-up. Issue 26's target: <= 1.5x the ms/iteration
measured before the rewrite. Timed in process CPU time (time.process_time, one thread), which a busy shared
machine perturbs much less than wall time.
"""

from __future__ import annotations

import statistics

import torch

import benchkit
import entry


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"rounds": 1, "iters": 2})
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20, help="iterations per round")
    args = benchkit.parse(ap, argv)
    bundle, X, y = benchkit.run_bundle(["dataset=boston", "model.likelihood=student_t", "objective=dlm",
                                        "model.num_inducing=50"])
    bundle.train()
    opt = torch.optim.Adam(bundle.trainable_parameters(), lr=0.01)
    benchkit.adam_steps(bundle.loss, opt, X, y, min(10, args.iters))  # warm-up
    ms = statistics.median(1e3 * statistics.median(benchkit.adam_steps(bundle.loss, opt, X, y, args.iters))
                           for _ in range(args.rounds))
    print(f"Student-t DLM step (boston, n={X.shape[0]}, M=50, full batch, quadrature): {ms:.2f} ms/iteration (CPU)")
    return ms


if __name__ == "__main__":
    entry.run(main)
