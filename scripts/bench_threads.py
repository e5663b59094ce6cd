"""Benchmark: wall time of the default `dlm-bench run` with 1 thread vs torch's default thread count.

Runs `dlm-bench run trainer.max_iters=<iters>` (boston, shipped) as a subprocess, alternately with
OMP_NUM_THREADS=1 and with DLM_BENCH_THREADS=<cores> (torch's default: one thread per core), results in a
temporary directory; reports the median process wall time of each. dlm_bench/run/threads.py's rule picks
1 thread for this problem (B M^2 far below its crossover).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time

import benchkit
import entry


def one_run(threads: int | None, iters: int, results: str) -> float:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "DLM_BENCH_THREADS", "DLM_BENCH_USER_OMP_NUM_THREADS")}
    if threads == 1:
        env["OMP_NUM_THREADS"] = "1"
    else:
        env["DLM_BENCH_THREADS"] = str(os.cpu_count() or 1)
    t0 = time.perf_counter()
    subprocess.run(benchkit.dlm_bench_cmd() + ["run", f"trainer.max_iters={iters}", "trainer.progress=off",
                                      f"results_dir={results}"], env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"iters": 1, "repeats": 1}, threads=None)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    args = benchkit.parse(ap, argv)
    cores = os.cpu_count() or 1
    walls = {"1": [], "default": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):  # interleaved
            walls["1"].append(one_run(1, args.iters, tmp))
            walls["default"].append(one_run(None, args.iters, tmp))
    w1, wd = statistics.median(walls["1"]), statistics.median(walls["default"])
    print(f"thread benchmark: `dlm-bench run trainer.max_iters={args.iters}` (boston), process wall, median of "
          f"{args.repeats} interleaved: 1 thread {w1:6.1f} s ({', '.join(f'{v:.1f}' for v in walls['1'])}) | "
          f"{cores} threads (torch default) {wd:6.1f} s ({', '.join(f'{v:.1f}' for v in walls['default'])})")
    return w1 / wd, cores


if __name__ == "__main__":
    entry.run(main)
