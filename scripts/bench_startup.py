"""Benchmark: the startup of `dlm-bench --help` next to `python -c pass` (the interpreter's floor), wall and CPU.

Each command runs as a fresh process --repeats times, alternately (A B A B ...); CPU is the child's user + system
time (resource.getrusage of the children). Issue 75's target: light commands use well under a second of CPU (no
torch or gpytorch import).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time

import benchkit
import entry

CPU_TARGET_S = 1.0


def timed_process(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of cmd, output discarded; a failing command is an error."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"repeats": 1}, threads=None)
    ap.add_argument("--repeats", type=int, default=5)
    args = benchkit.parse(ap, argv)
    cmds = {"dlm-bench --help": benchkit.dlm_bench_cmd() + ["--help"], "python -c pass": [sys.executable, "-c", "pass"]}
    runs = {label: [] for label in cmds}
    for _ in range(args.repeats):
        for label, cmd in cmds.items():
            runs[label].append(timed_process(cmd))
    result = {label: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for label, r in runs.items()}
    for label, (wall, cpu) in result.items():
        print(f"{label:18s} wall {wall:6.2f} s, CPU {cpu:6.2f} s (median of {args.repeats}; wall "
              f"{', '.join(f'{w:.2f}' for w, _ in runs[label])})")
    return result


if __name__ == "__main__":
    entry.run(main)
