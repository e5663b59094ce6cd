"""`dlm-bench sweep --time-limit`: start a grid point only if it is expected to finish in time.

Why: a run is written when it ends, so a sweep stopped at the end of a session or a batch allocation loses the
points it was training (on cadata at n = 3000, 10-20 minutes each). With a time limit, the sweep leaves a point
that would not finish for the next sweep ("deferred"): it writes nothing for it and exits with DEFERRED_EXIT
(75, EX_TEMPFAIL: run the same command again to go on).

A point is expected to take what `dlm-bench sweep --estimate` says for it (cost_estimate.py): the median of the
finished runs of the same settings in the results directory, else the cost model, recalibrated on the finished
runs; a batched beta group (objective.beta_batch) costs that per member still to train. A point without an
estimate (own-loop models with nothing finished yet) starts while any time is left.

A point whose training checkpoints (the Trainer's models, SAVIGP and SGGPM, trainer.checkpoint_every_s > 0;
training/checkpoint.py) is not held back by its length: it starts while MIN_SLICE_S or more are left and, at the
deadline, its training loop saves its checkpoint at the end of the iteration and stops (TimeLimitReached: deferred,
no run.json); an SGGPM point stops at once and keeps its finished folds (util/interrupts.whole_units). The next sweep
resumes it, and its estimate counts only the work left. So a point longer than any one session (PAC Table 3 at
n = 12,000: about 2 CPU hours; SGGPM grad-sparse on musk) advances sweep by sweep. An FP point already running at
the deadline is not stopped (FP keeps no checkpoint); leave a margin, or stop the sweep (SIGTERM).

The parent sets the deadline (DEADLINE_ENV, seconds since the epoch) for its jobs: the local launcher's jobs run in
its process, joblib's workers inherit it. SLURM jobs have their own limit (launcher.time_min): the flag
is refused there.
"""

from __future__ import annotations

import copy
import os
import re
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from omegaconf import DictConfig

from ..util.environ import environ_set

DEADLINE_ENV = "DLM_BENCH_SWEEP_DEADLINE"
DEFERRED_EXIT = 75  # sysexits.h EX_TEMPFAIL: not done, try again
# a checkpointing point starts past its estimate only with this much time left: a resumed run first redoes what
# comes before its training loop (data, model, stage 1 from its store), seconds to a minute on the largest sets
MIN_SLICE_S = 120.0
RETRY_S = 5.0  # the deadline's alarm outside a training loop (data loading, evaluation) looks again this much later
# the longest --time-limit: a sweep's alarm (setitimer) overflows near 2**31 s, and a longer limit is no limit
MAX_DURATION_S = 366 * 86400.0
_UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([dhms])")


def parse_duration(text: str) -> float:
    """Seconds in '2h30m', '90m', '1.5h', '45s', '1d' or a bare number of seconds; ValueError (one line) else."""
    s = str(text).strip().lower().replace(" ", "")
    if s.startswith("-") and len(s) > 1:  # -5m: a negative duration, not "not a duration"
        parse_duration(s[1:])
        raise ValueError(f"--time-limit {text!r} must be a finite duration > 0")
    try:
        seconds = float(s)
    except ValueError:
        parts = _DURATION.findall(s)
        if not parts or "".join(n + u for n, u in parts) != s:
            raise ValueError(f"--time-limit {text!r} is not a duration; use e.g. 2h30m, 90m, 45s or seconds") from None
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"--time-limit {text!r} must be a finite duration > 0")
    if seconds > MAX_DURATION_S:
        raise ValueError(f"--time-limit {text!r} is longer than a year (366d); leave --time-limit out for no limit")
    return seconds


def set_deadline(end: float | None):
    """Context manager: the deadline (seconds since the epoch; None: none) announced to this sweep's jobs for
    the block; afterwards the environment is as before."""
    return environ_set(DEADLINE_ENV, None if end is None else repr(end))


def deadline() -> float | None:
    value = os.environ.get(DEADLINE_ENV)
    return float(value) if value else None


def _pending_members(cfg: DictConfig, config: dict) -> int:
    """The members of this point's beta group still to train (the group trains them in one job)."""
    from ..results.contract import read_status
    from ..run import run_dir_for
    from ..run.batched import group_indices, member_config
    from .compose import sweep_beta_indices
    from .cost_estimate import n_train

    n = n_train(config)
    if not n:
        return 1
    pending = [k for k in group_indices(cfg, n, sweep_beta_indices())
               if read_status(run_dir_for(member_config(cfg, k))) not in ("ok", "diverged", "failed")]
    return max(1, len(pending))


def expected_seconds(cfg: DictConfig) -> float | None:
    """What `--estimate` expects this point (or its batched group) to take; None when nothing estimates it."""
    from ..models.task_defaults import resolve_task_defaults
    from ..run import config_dict, run_dir_for
    from .cost_estimate import batched_point, estimate

    resolved = copy.deepcopy(cfg)
    try:
        resolve_task_defaults(resolved)
    except Exception:  # the run itself reports a bad configuration
        return None
    config = config_dict(resolved)
    batched = batched_point(config)
    est = estimate([(config, config["model"].get("likelihood"))], Path(cfg.results_dir) / cfg.experiment,
                   None if batched else [run_dir_for(cfg)])
    if not (est.from_runs or est.from_model or est.from_sizes):
        return None
    return est.seconds * (_pending_members(cfg, config) if batched else 1)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 600 else f"{seconds:.0f} s"


def defer_reason(cfg: DictConfig, now: float | None = None) -> str | None:
    """Why this new point must wait for the next sweep, or None (no time limit, or it fits)."""
    end = deadline()
    if end is None:
        return None
    left = end - (time.time() if now is None else now)
    if left <= 0:
        return "the sweep's --time-limit is reached"
    need = expected_seconds(cfg)
    if need is not None and need > left:
        if checkpoints(cfg) and left >= MIN_SLICE_S:
            return None  # it trains until the deadline, then saves and stops (stop_at_deadline)
        return f"expected to take about {_minutes(need)}, {_minutes(left)} of the sweep's --time-limit left"
    return None


def checkpoints(cfg: DictConfig) -> bool:
    """The point's training saves checkpoints that the deadline can stop it at (ModelSpec.checkpoints: the shared
    Trainer's models, SAVIGP and SGGPM) with trainer.checkpoint_every_s > 0."""
    from ..registry.models import MODELS

    spec = MODELS.get(cfg.model.name)
    return spec is not None and spec.checkpoints and bool(cfg.trainer.get("checkpoint_every_s"))


@contextmanager
def stop_at_deadline(cfg: DictConfig):
    """Around one point's run in a sweep with --time-limit: at the deadline a checkpointing point's training loop
    saves its checkpoint at the end of the iteration and raises TimeLimitReached (held like SIGTERM,
    util/interrupts.py). Outside a training loop the alarm looks again every RETRY_S, so a run whose training has
    ended finishes and is written. Main thread only (SIGALRM); elsewhere, without a deadline, or for a point that
    does not checkpoint, nothing is armed."""
    end = deadline()
    if end is None or not checkpoints(cfg) or threading.current_thread() is not threading.main_thread():
        yield
        return
    from ..errors import TimeLimitReached
    from ..util import interrupts

    def stop(signum, frame):
        raise TimeLimitReached("stopped at the sweep's --time-limit with its checkpoint saved: the same command "
                               "resumes it")

    def alarm(signum, frame):
        if interrupts.hold(signum, stop):
            return  # a training loop saves its checkpoint at the end of the iteration, then stops
        if interrupts.acts_at_once():
            stop(signum, frame)  # a loop of whole units (SGGPM's folds): the finished ones are saved
        signal.setitimer(signal.ITIMER_REAL, RETRY_S)

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, max(end - time.time(), 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
