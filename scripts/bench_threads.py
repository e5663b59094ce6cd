"""Benchmark: wall time of the default `dlm-bench run` with 1 thread vs torch's default thread count.

Runs `dlm-bench run trainer.max_iters=<iters>` (boston, shipped) as a subprocess, alternately with
OMP_NUM_THREADS=1 and with DLM_BENCH_THREADS=<cores> (torch's default: one thread per core), results in a
temporary directory; reports the median process wall time of each. dlm_bench/run/threads.py's rule picks
1 thread for this problem (B M^2 far below its crossover).

--crossover: where more threads start to pay off instead: ms per SVGP iteration (ELBO, full batch, float64, D=8) at
1 thread vs --threads N over a grid of batch size B and inducing points M (--sizes B:M,B:M,...), interleaved, median
of --rounds 3. dlm_bench/run/threads.py uses the B*M^2 at which the ratio crosses 1 (WORK_CROSSOVER). Slow for the
largest sizes.
"""

from __future__ import annotations

import os
import statistics
import tempfile

import benchkit
import entry


def one_run(threads: int | None, iters: int, results: str) -> float:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "DLM_BENCH_THREADS", "DLM_BENCH_USER_OMP_NUM_THREADS")}
    if threads == 1:
        env["OMP_NUM_THREADS"] = "1"
    else:
        env["DLM_BENCH_THREADS"] = str(os.cpu_count() or 1)
    return benchkit.timed_process(benchkit.dlm_bench_cmd() + ["run", f"trainer.max_iters={iters}",
                                                              "trainer.progress=off", f"results_dir={results}"], env)[0]


def svgp_ms(mll, X, y, iters):
    """Median wall ms of an Adam step of the bare GPyTorch SVGP (bench_trainer.make)."""
    import torch

    mll.train()
    opt = torch.optim.Adam(mll.parameters(), lr=0.01)
    return 1e3 * statistics.median(benchkit.adam_steps(lambda X, y: -mll(mll.model(X), y), opt, X, y, iters, cpu=False))


def crossover(args) -> dict:
    """{(B, M): N-thread ms / 1-thread ms} over the --sizes grid."""
    import torch

    from bench_trainer import make

    ratios = {}
    for item in args.sizes.split(","):
        B, M = map(int, item.split(":"))
        X, y = benchkit.synthetic_regression(B, 8)
        r = {1: [], args.threads: []}
        for _ in range(args.rounds):
            for t in r:
                torch.set_num_threads(t)
                r[t].append(svgp_ms(make(X, M, 0), X, y, args.iters or 8))
        a, b = statistics.median(r[1]), statistics.median(r[args.threads])
        print(f"B={B:6d} M={M:4d} B*M^2={B * M * M:.1e}  1 thread {a:8.1f} ms  {args.threads} threads {b:8.1f} ms  "
              f"ratio {b / a:5.2f}  (load average {os.getloadavg()[0]:.1f})", flush=True)
        ratios[(B, M)] = b / a
    return ratios


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"iters": 1, "repeats": 1, "sizes": "100:10", "rounds": 1}, threads=None)
    ap.add_argument("--iters", type=int, default=None, help="training iterations (default 100; --crossover: 8)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--crossover", action="store_true", help="1 vs N threads per SVGP iteration over a B:M grid")
    ap.add_argument("--sizes", default="500:50,1000:100,2000:100,5000:100,5000:200,10000:200,10000:400",
                    help="--crossover: the B:M grid")
    ap.add_argument("--threads", type=int, default=None, help="--crossover: N, timed against 1 (default: the cores)")
    ap.add_argument("--rounds", type=int, default=3, help="--crossover: interleaved rounds")
    args = benchkit.parse(ap, argv)
    if args.crossover:
        args.threads = args.threads or os.cpu_count() or 1
        return crossover(args)
    iters, cores = args.iters or 100, os.cpu_count() or 1
    walls = {"1": [], "default": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):  # interleaved
            walls["1"].append(one_run(1, iters, tmp))
            walls["default"].append(one_run(None, iters, tmp))
    w1, wd = statistics.median(walls["1"]), statistics.median(walls["default"])
    print(f"thread benchmark: `dlm-bench run trainer.max_iters={iters}` (boston), process wall, median of "
          f"{args.repeats} interleaved: 1 thread {w1:6.1f} s ({', '.join(f'{v:.1f}' for v in walls['1'])}) | "
          f"{cores} threads (torch default) {wd:6.1f} s ({', '.join(f'{v:.1f}' for v in walls['default'])})")
    return w1 / wd, cores


if __name__ == "__main__":
    entry.run(main)
