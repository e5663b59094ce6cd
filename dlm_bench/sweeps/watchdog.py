"""A joblib worker must not outlive its sweep: the parent watchdog (a SIGKILLed sweep cannot stop its loky workers,
so each worker polls its parent and unwinds its job when the parent is gone)."""

from __future__ import annotations

import os
import signal
import threading
import time

from omegaconf import DictConfig

# The sweep's own process id, set by run_sweep and inherited by joblib's (loky) workers: a job running in another
# process of a joblib sweep is in a worker, which must not outlive the sweep (a SIGKILLed parent cannot stop it).
SWEEP_PID_ENV = "DLM_BENCH_SWEEP_PID"
WATCHDOG_POLL_S = 1.0
WATCHDOG_GRACE_S = 5.0  # after SIGTERM, time for the job to unwind (release its lock) before os._exit
_watchdog: threading.Thread | None = None


def watch_parent(poll_s: float = WATCHDOG_POLL_S, grace_s: float = WATCHDOG_GRACE_S) -> threading.Thread | None:
    """Once per worker process: a daemon thread that polls os.getppid() and, when the parent is gone (the worker
    was re-parented), SIGTERMs this process (signals.raise_terminated: the job unwinds and releases its locks),
    then os._exit after `grace_s`."""
    global _watchdog
    if _watchdog is not None and _watchdog.is_alive():
        return _watchdog
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except OSError:
            pass
        time.sleep(grace_s)
        os._exit(143)

    _watchdog = threading.Thread(target=watch, name="dlm-bench-parent-watchdog", daemon=True)
    _watchdog.start()
    return _watchdog


def in_joblib_worker(cfg: DictConfig) -> bool:
    sweep_pid = os.environ.get(SWEEP_PID_ENV)
    return cfg.launcher.name == "joblib" and sweep_pid is not None and sweep_pid != str(os.getpid())


