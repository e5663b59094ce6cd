"""The sweep's point job: `sweep_job(cfg)`, the Hydra task function of `dlm-bench sweep`.

It skips grid points whose run.json already says ok / diverged (and failed, unless resume.retry_failed), records a
failure of the point's training as a failed run.json, and returns its outcome so the parent can count skipped / run /
failed jobs, whichever launcher (basic, joblib, submitit_slurm) ran it. Errors of the machine (data that cannot be
had, disk, permissions) are not a point's result: nothing is written for them (outcome `not_run`).
"""

from __future__ import annotations

import os
from pathlib import Path

from omegaconf import DictConfig

from ..config.beta_grid import OutsideBetaGrid
from ..data import DatasetError
from ..errors import ConfigError, NotApplicable, OutOfRequeues, ResultsNotWritten, TimeLimitReached
from ..run import execute
from ..run.batched import RunningElsewhere, group_lock, requested
from ..run.record import failure_record, progress
from ..run.signals import check_not_terminated, install
from ..util.logline import numbered
from ..util.locks import SWEEP_ID_ENV, RunLock, holder
from .compose import job_number, job_overrides, sweep_beta_indices
from .deadline import defer_reason, stop_at_deadline
from .plan import point_state
from .progress import announce
from .watchdog import in_joblib_worker, watch_parent


def _set_threads(cfg: DictConfig) -> None:
    import torch

    from ..run.threads import set_cores

    cpus = cfg.launcher.cpus
    if cpus is None:
        cpus = max(1, (os.cpu_count() or 1) // max(1, cfg.launcher.n_jobs))
    torch.set_num_threads(cpus)
    set_cores(cpus)  # the run then takes 1 thread or these `cpus` (dlm_bench/run/threads.py)


def sweep_job(cfg: DictConfig) -> str:
    """One grid point. Never raises for a failing configuration (it is recorded); returns an OUTCOME. A job that
    trains tells the sweep's progress display when it starts and ends (progress.announce). Its log lines and
    events carry Hydra's job number, passed in here (util/logline.py numbered)."""
    started: list = []
    outcome = "interrupted"  # what the progress line says when the job unwinds (Ctrl-C, SIGTERM) without an outcome
    with numbered(job_number()):
        try:
            outcome = _sweep_job(cfg, started)
            return outcome
        finally:
            if started or outcome in ("skipped", "running_elsewhere"):
                announce("end", _announced_as(cfg, outcome, started))


def _announced_as(cfg: DictConfig, outcome: str, started: list) -> str:
    """The end event's outcome. Skipped at run time (not in the plan's skips): a batched group's member that its
    group's job trained, or, for a point outside any group, one that another sweep finished after this sweep
    planned ("done_elsewhere"): the progress display counts the first against the group's time, not the second."""
    if outcome == "skipped" and not started and not requested(cfg):
        return "done_elsewhere"
    return outcome


def _started(started: list) -> None:
    started.append(1)
    announce("start")


def _sweep_job(cfg: DictConfig, started: list) -> str:
    check_not_terminated()
    if in_joblib_worker(cfg):
        install()  # SIGTERM (from the watchdog or the parent's stop_workers) unwinds the job
        watch_parent()
    _set_threads(cfg)
    state, run_dir = point_state(cfg)
    if state == "outside_grid":
        return "outside_grid"
    if state == "done":
        return "skipped"
    if state == "failed":  # skipped, but counted apart: a re-run of a sweep with failed points is no bare success
        return "failed_before"
    if state != "running_elsewhere":
        why = defer_reason(cfg)  # sweep --time-limit: a point that would not finish waits for the next sweep
        if why:
            progress(run_dir, "deferred", {}, None, why)
            return "deferred"
    if requested(cfg):  # objective.beta_batch: the first job of a beta group trains the group
        return sweep_group_job(cfg, run_dir, started)
    install()  # a joblib worker stopped by stop_workers() unwinds through `finally` and releases its lock
    lock = RunLock(run_dir)
    if not lock.acquire():
        progress(run_dir, "running elsewhere", {}, None)
        return "running_elsewhere"
    try:
        if point_state(cfg)[0] in ("done", "failed"):  # another sweep finished it before we locked
            return "skipped"
        _started(started)
        return _execute_point(cfg, run_dir)
    finally:
        lock.release()


# Errors found before training, not a point's result: data that cannot be had (DatasetError), a setting that does
# not fit the data or a device this machine lacks (ConfigError), a full disk or a permission (OSError). run.execute raises them only before training (after it,
# a failure is recorded by the harness itself); written as a failed run.json, every later sweep would skip the point.
MACHINE_ERRORS = (DatasetError, ConfigError, OSError)
# configuration errors already said by this process: every point of a grid usually repeats the first one (M larger
# than the data, each beta of a batched grid), which is then said once and named "the same" after that
_SAID: set[str] = set()


def _not_run_reason(err: BaseException) -> str:
    """The progress line's reason for a point not run: a ConfigError is the points' settings (said once per
    process), anything else this machine's."""
    if isinstance(err, ConfigError):
        text = str(err)
        if text in _SAID:
            return "the same configuration error as above (nothing written)"
        _SAID.add(text)
        return f"configuration error: {text} (nothing written)"
    return f"{type(err).__name__}: {err} (nothing written; an error of this machine, not of the point)"


def _execute_point(cfg: DictConfig, run_dir: Path) -> str:
    """harness.execute for a sweep point: its outcome, with a progress line; failures recorded."""
    try:
        with stop_at_deadline(cfg):  # sweep --time-limit: a checkpointing point stops there, to resume later
            record, _ = execute(cfg, sweep_beta_indices(), job_overrides())
        progress(run_dir, record.status, record.metrics, record.train.get("total_wall_s", record.train.get("wall_s")))
        return record.status
    except RunningElsewhere:
        progress(run_dir, "running elsewhere", {}, None)
        return "running_elsewhere"
    except (OutOfRequeues, TimeLimitReached) as err:  # checkpoint kept, nothing written: the next sweep resumes it
        progress(run_dir, "deferred", {}, None, str(err))
        return "deferred"
    except OutsideBetaGrid:
        return "outside_grid"
    except ResultsNotWritten as err:  # trained, but its run directory could not be written: rescued elsewhere
        progress(run_dir, "failed", {}, None, str(err))
        return "failed"
    except NotApplicable as err:  # a point the paper does not have: nothing written
        progress(run_dir, "not applicable", {}, None, str(err))
        return "not_applicable"
    except MACHINE_ERRORS as err:  # raised before training (execute writes nothing then): not the point's result
        progress(run_dir, "not run", {}, None, _not_run_reason(err))
        return "not_run"
    except Exception as err:  # other errors of this grid point: recorded, the sweep goes on
        failure_record(cfg, err)
        progress(run_dir, "failed", {}, None, f"{type(err).__name__}: {err}")
        return "failed"


def sweep_group_job(cfg: DictConfig, run_dir: Path, started: list | None = None) -> str:
    """sweep_job for a beta_batch grid point: wait for the group lock, then train the group unless the point
    was finished meanwhile (by the job that held the lock). Returns at once when the lock's holder is training
    this point: "skipped" when the holder is a job of this sweep (another worker training the group: like the
    members a one-at-a-time launcher finds done), "running_elsewhere" when it is another sweep's (two sweeps
    sharing a results directory; a point run unbatched, e.g. a minibatch one, is a group of its own)."""
    install()
    with group_lock(cfg, member=run_dir) as held:
        if held is None:  # beyond the beta grid the group's trainer recorded: no process trains this point
            return "outside_grid"
        if not held:
            trainer = holder(run_dir)
            if trainer is not None and trainer.get("sweep") != os.environ.get(SWEEP_ID_ENV):
                progress(run_dir, "running elsewhere", {}, None)
                return "running_elsewhere"
            return "skipped"
        if point_state(cfg)[0] in ("done", "failed"):
            return "skipped"
        _started([] if started is None else started)
        return _execute_point(cfg, run_dir)


