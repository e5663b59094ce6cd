"""Where more threads start to pay off: ms per SVGP iteration (ELBO, full batch, float64, D=8) at 1 thread
vs N threads over a grid of batch size B and inducing points M, interleaved, median of 3 rounds (--rounds).
dlm_bench/run/threads.py uses the B*M^2 at which the ratio crosses 1 (WORK_CROSSOVER). Slow for the
largest sizes; choose the grid with --sizes B:M,B:M,..."""

from __future__ import annotations

import os
import statistics

import torch

import benchkit
import entry
from bench_trainer import make


def ms(mll, X, y, iters):
    """Median wall ms of an Adam step of the bare GPyTorch SVGP (bench_trainer.make)."""
    mll.train()
    opt = torch.optim.Adam(mll.parameters(), lr=0.01)
    return 1e3 * statistics.median(benchkit.adam_steps(lambda X, y: -mll(mll.model(X), y), opt, X, y, iters, cpu=False))


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"sizes": "100:10", "iters": 1, "rounds": 1}, threads=None)
    ap.add_argument("--sizes", default="500:50,1000:100,2000:100,5000:100,5000:200,10000:200,10000:400")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    args = benchkit.parse(ap, argv)
    ratios = {}
    for item in args.sizes.split(","):
        B, M = map(int, item.split(":"))
        X, y = benchkit.synthetic_regression(B, 8)
        r = {1: [], args.threads: []}
        for _ in range(args.rounds):
            for t in r:
                torch.set_num_threads(t)
                r[t].append(ms(make(X, M, 0), X, y, args.iters))
        a, b = statistics.median(r[1]), statistics.median(r[args.threads])
        print(f"B={B:6d} M={M:4d} B*M^2={B * M * M:.1e}  1 thread {a:8.1f} ms  {args.threads} threads {b:8.1f} ms  "
              f"ratio {b / a:5.2f}  (load average {os.getloadavg()[0]:.1f})", flush=True)
        ratios[(B, M)] = b / a
    return ratios


if __name__ == "__main__":
    entry.run(main)
