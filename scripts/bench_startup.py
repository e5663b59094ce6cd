"""Benchmark: the startup of `dlm-bench --help` next to `python -c pass` (the interpreter's floor), wall and CPU.

Each command runs as a fresh process --repeats times, alternately (A B A B ...); CPU is the child's user + system
time (resource.getrusage of the children). Issue 75's target: light commands use well under a second of CPU (no
torch or gpytorch import).
"""

from __future__ import annotations

import statistics
import sys

import benchkit
import entry

CPU_TARGET_S = 1.0


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"repeats": 1}, threads=None)
    ap.add_argument("--repeats", type=int, default=5)
    args = benchkit.parse(ap, argv)
    cmds = {"dlm-bench --help": benchkit.dlm_bench_cmd() + ["--help"], "python -c pass": [sys.executable, "-c", "pass"]}
    runs = {label: [] for label in cmds}
    for _ in range(args.repeats):
        for label, cmd in cmds.items():
            runs[label].append(benchkit.timed_process(cmd))
    result = {label: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for label, r in runs.items()}
    for label, (wall, cpu) in result.items():
        print(f"{label:18s} wall {wall:6.2f} s, CPU {cpu:6.2f} s (median of {args.repeats}; wall "
              f"{', '.join(f'{w:.2f}' for w, _ in runs[label])})")
    return result


if __name__ == "__main__":
    entry.run(main)
