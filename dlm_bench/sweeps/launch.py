"""`dlm-bench sweep`: the Hydra launch of a grid (resumable and loss-free) and its one-line summary.

The jobs are `job.sweep_job`; the grid is planned and validated before (plan.py); a joblib worker watches its
parent (watchdog.py).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import uuid
from collections import Counter
from contextlib import ExitStack

from ..run.signals import raise_terminated, reset, stop_workers
from ..util.environ import environ_set
from ..util.locks import SWEEP_ID_ENV
from .compose import INDICES_ENV, command_line_beta_indices
from .hydra_app import multirun
from .job import sweep_job
from .plan import DRY_RUN_WORDS
from .progress import PROGRESS_ENV, Monitor, Progress
from .watchdog import SWEEP_PID_ENV


def run_sweep(overrides: list[str], shown: Progress | None = None) -> Counter:
    """Compose with `overrides` in multirun mode and launch every job; returns the outcome counts. shown: the
    progress display (its events file is announced to the jobs; see progress.py)."""
    reset()  # a new sweep in this process (tests, notebooks) after an earlier one was stopped
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, raise_terminated) if main_thread else None
    announced = ExitStack()  # restored in `finally`: a later sweep in this process sees none of it
    announced.enter_context(environ_set(INDICES_ENV, command_line_beta_indices(overrides)))  # batched groups
    announced.enter_context(environ_set(SWEEP_PID_ENV, str(os.getpid())))  # joblib's workers: watch_parent
    # recorded in the run locks its jobs take: a job can tell a point this sweep trains from one another sweep does
    announced.enter_context(environ_set(SWEEP_ID_ENV, uuid.uuid4().hex))
    if shown is not None:
        announced.enter_context(environ_set(PROGRESS_ENV, str(shown.path)))
        announced.enter_context(Monitor(shown))
    try:
        batches = multirun(overrides, sweep_job)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: no worker may go on training without us
        # the resource trackers are left to exit with us (their pipe closes): killed, loky relaunches one at exit
        # that prints a leak warning and KeyError tracebacks for every semaphore it is told to forget (issue 58)
        stop_workers(keep_trackers=True)
        raise
    finally:
        announced.close()
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    counts: Counter = Counter()
    for batch in batches:
        for job in batch:
            try:
                counts[job.return_value] += 1
            except Exception as err:  # a job that died outside sweep_job (e.g. killed by SLURM)
                print(f"dlm-bench: sweep job failed outside the runner: {err}", file=sys.stderr)
                counts["failed"] += 1
    return counts


def summary_line(counts: Counter) -> str:
    run = counts["ok"] + counts["diverged"] + counts["failed"]
    skipped = counts["skipped"] + counts["failed_before"]
    parts = [
        f"{sum(counts.values())} jobs",
        f"{skipped} skipped" + (f" ({counts['failed_before']} of them failed before: --retry-failed re-runs them)"
                                if counts["failed_before"] else ""),
        f"{run} run ({counts['ok']} ok, {counts['diverged']} diverged, {counts['failed']} failed)",
    ]
    if counts["not_run"]:
        parts.append(f"{counts['not_run']} not run (found before training, said above: a configuration error or "
                     "one of this machine; nothing written; fix it and run the same command again)")
    parts += [f"{counts[state]} {DRY_RUN_WORDS[state]}" for state in ("running_elsewhere", "outside_grid",
                                                                     "not_applicable") if counts[state]]
    if counts["deferred"]:
        parts.append(f"{counts['deferred']} deferred (would not finish within --time-limit: run the same command "
                     "again to go on)")
    return "sweep: " + ", ".join(parts)
