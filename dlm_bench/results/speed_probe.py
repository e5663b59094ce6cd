"""A few-millisecond measure of this machine's single-core speed, so that run times carry across machines.

Every run.json records `env.speed_probe_s` (the probe's seconds when the run was written); `sweep --estimate` and
`--time-limit` scale a finished run's seconds by (this machine's probe / the run's probe). Without it, runs carried
from a slower machine (a `runs.tgz` archive, another session) make every estimate high by that machine's ratio:
on 2026-11-28 a batched fixed-DLM group estimated at 86 min from a machine 2.6x slower was deferred though it fit.

The workload is the kind of step the models take (float64 Cholesky and matrix products of a 200 x 200 SPD
matrix), on one thread like a run under the thread rule. The best of twenty short repeats (each about a
millisecond, shorter than a scheduler's time slice) measures the hardware rather than the moment's load: beside
two busy sweeps on two cores it stayed within 3 %, where 5 ms repeats read 4 or 8 ms. Each repeat is timed in this
process's CPU seconds (time.process_time), not wall: at load 13-15 on 2 cores (2026-12-07) wall repeats read 2 to 28
ms where the idle figure is 1.2 ms (no repeat ran a whole millisecond unpreempted), and `--estimate` scaled by that
said 25 minutes for a 3-minute sweep. Load is already in the finished runs' own times. About 40 ms a call. Written by hand: no library offers a
stable, sub-second CPU speed figure for this kind of work.
"""

from __future__ import annotations

import functools
import time

SIZE = 200
STEPS = 3  # Cholesky + product pairs in one repeat (about 1.2 ms on a 2-core AMD EPYC)
REPEATS = 20


def speed_probe_seconds() -> float:
    """Seconds of the best of REPEATS repeats of the fixed workload on one thread (lower is faster)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        g = torch.Generator().manual_seed(0)
        a = torch.randn(SIZE, SIZE, generator=g, dtype=torch.float64)
        spd = a @ a.T + SIZE * torch.eye(SIZE, dtype=torch.float64)
        best = float("inf")
        for _ in range(REPEATS):
            start = time.process_time()  # CPU seconds: the time slices other processes take are not counted
            for _ in range(STEPS):
                chol = torch.linalg.cholesky(spd)
                spd_again = chol @ chol.T
            best = min(best, time.process_time() - start)
        del spd_again
        return best
    finally:
        torch.set_num_threads(threads)


@functools.lru_cache(maxsize=1)
def this_machine() -> float:
    """The probe, measured once per process (a sweep's estimates all compare against the same figure)."""
    return speed_probe_seconds()


def machine_ratio(recorded: object, now: float) -> float:
    """How many times longer a run recorded with probe `recorded` takes on a machine whose probe is `now`: now /
    recorded, or 1 where the run has no usable probe (records written before 2026-11-28)."""
    try:
        r = float(recorded)
    except (TypeError, ValueError):
        return 1.0
    return now / r if r > 0 and now > 0 else 1.0
