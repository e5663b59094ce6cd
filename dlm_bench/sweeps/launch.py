"""`dlm-bench sweep`: a Hydra multirun over a grid, resumable and loss-free.

Each job is `sweep_job(cfg)`: it skips grid points whose run.json already says ok / diverged (and failed,
unless resume.retry_failed), records any failure as a failed run.json, and returns its outcome so the
parent can count skipped / run / failed jobs, whichever launcher (basic, joblib, submitit_slurm) ran it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

from omegaconf import DictConfig

from ..config.beta_grid import OutsideBetaGrid, apply_beta_grid_flag
from ..errors import ConfigError, NotApplicable, ResultsNotWritten, Terminated
from ..results.contract import read_status
from ..run import config_dict, execute, run_dir_for, run_name
from ..run.batched import INDICES_ENV, RunningElsewhere, command_line_beta_indices, group_lock, requested
from ..run.progress import progress
from ..run.record import failure_record
from ..run.signals import check_not_terminated, install, raise_terminated, reset, stop_workers
from ..util.environ import environ_set
from ..util.locks import RunLock, holder
from .deadline import defer_reason

OUTCOMES = ("skipped", "ok", "diverged", "failed", "outside_grid", "not_applicable", "running_elsewhere", "deferred")


def _set_threads(cfg: DictConfig) -> int:
    import torch

    from ..run.threads import set_cores

    cpus = cfg.launcher.cpus
    if cpus is None:
        cpus = max(1, (os.cpu_count() or 1) // max(1, cfg.launcher.n_jobs))
    torch.set_num_threads(cpus)
    set_cores(cpus)  # the run then takes 1 thread or these `cpus` (dlm_bench/run/threads.py)
    return cpus


def point_state(cfg: DictConfig, run_dir: Path | None = None) -> tuple[str, Path | None]:
    """What a sweep does with this grid point, before it runs: (state, run_dir) with state one of
    new | done | failed | rerun | outside_grid | running_elsewhere. Mutates cfg.objective like a run."""
    try:
        apply_beta_grid_flag(cfg.objective)
    except OutsideBetaGrid:
        return "outside_grid", None
    run_dir = run_dir_for(cfg) if run_dir is None else run_dir
    status = read_status(run_dir)
    if status is not None and not cfg.resume.force:
        if status in ("ok", "diverged"):
            return "done", run_dir
        if status == "failed" and not cfg.resume.retry_failed:
            return "failed", run_dir
    if holder(run_dir) is not None:
        return "running_elsewhere", run_dir
    return ("new" if status is None else "rerun"), run_dir


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


def _in_joblib_worker(cfg: DictConfig) -> bool:
    sweep_pid = os.environ.get(SWEEP_PID_ENV)
    return cfg.launcher.name == "joblib" and sweep_pid is not None and sweep_pid != str(os.getpid())


def sweep_job(cfg: DictConfig) -> str:
    """One grid point. Never raises for a failing configuration (it is recorded); returns an OUTCOME."""
    check_not_terminated()
    if _in_joblib_worker(cfg):
        install()  # SIGTERM (from the watchdog or the parent's stop_workers) unwinds the job
        watch_parent()
    _set_threads(cfg)
    state, run_dir = point_state(cfg)
    if state == "outside_grid":
        return "outside_grid"
    if state in ("done", "failed"):
        return "skipped"
    if state != "running_elsewhere":
        why = defer_reason(cfg)  # sweep --time-limit: a point that would not finish waits for the next sweep
        if why:
            progress(run_dir, "deferred", {}, None, why)
            return "deferred"
    if requested(cfg):  # objective.beta_batch: the first job of a beta group trains the group
        return sweep_group_job(cfg, run_dir)
    install()  # a joblib worker stopped by stop_workers() unwinds through `finally` and releases its lock
    lock = RunLock(run_dir)
    if not lock.acquire():
        progress(run_dir, "running elsewhere", {}, None)
        return "running_elsewhere"
    try:
        if point_state(cfg)[0] in ("done", "failed"):  # another sweep finished it before we locked
            return "skipped"
        return _execute_point(cfg, run_dir)
    finally:
        lock.release()


def _execute_point(cfg: DictConfig, run_dir: Path) -> str:
    """harness.execute for a sweep point: its outcome, with a progress line; failures recorded."""
    try:
        record, _ = execute(cfg)
        progress(run_dir, record.status, record.metrics, record.train.get("total_wall_s", record.train.get("wall_s")))
        return record.status
    except RunningElsewhere:
        progress(run_dir, "running elsewhere", {}, None)
        return "running_elsewhere"
    except OutsideBetaGrid:
        return "outside_grid"
    except ResultsNotWritten as err:  # trained, but its run directory could not be written: rescued elsewhere
        progress(run_dir, "failed", {}, None, str(err))
        return "failed"
    except NotApplicable as err:  # a point the paper does not have: nothing written
        progress(run_dir, "not applicable", {}, None, str(err))
        return "not_applicable"
    except Exception as err:  # config/data errors of this grid point: recorded, the sweep goes on
        failure_record(cfg, err)
        progress(run_dir, "failed", {}, None, f"{type(err).__name__}: {err}")
        return "failed"


def sweep_group_job(cfg: DictConfig, run_dir: Path) -> str:
    """sweep_job for a beta_batch grid point: wait for the group lock, then train the group unless the point
    was finished meanwhile (by the job that held the lock). Returns at once ("skipped") when the lock's holder
    is training this point."""
    install()
    with group_lock(cfg, member=run_dir) as held:
        # not held: the group's job (another worker or sweep) is training this point; like the group's
        # members that a one-at-a-time launcher finds done, it counts as skipped
        if not held or point_state(cfg)[0] in ("done", "failed"):
            return "skipped"
        return _execute_point(cfg, run_dir)


def run_sweep(overrides: list[str]) -> Counter:
    """Compose with `overrides` in multirun mode and launch every job; returns the outcome counts."""
    from hydra import version
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path
    from hydra.core.global_hydra import GlobalHydra

    from ..config.schema import conf_dir, register_configs

    reset()  # a new sweep in this process (tests, notebooks) after an earlier one was stopped
    register_configs()
    version.setbase("1.3")
    GlobalHydra.instance().clear()
    # Hydra's public entry point (@hydra.main) exits the process and drops the jobs' return values;
    # the internal Hydra object returns them, which the skipped/run/failed summary needs.
    hydra = Hydra.create_main_hydra2("dlm_bench", create_config_search_path(str(conf_dir())))
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, raise_terminated) if main_thread else None
    announced = ExitStack()  # restored in `finally`: a later sweep in this process sees none of it
    announced.enter_context(environ_set(INDICES_ENV, command_line_beta_indices(overrides)))  # batched.py's group
    announced.enter_context(environ_set(SWEEP_PID_ENV, str(os.getpid())))  # joblib's workers: watch_parent
    try:
        batches = hydra.multirun(config_name="config", task_function=sweep_job, overrides=overrides)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: no worker may go on training without us
        stop_workers()
        raise
    finally:
        announced.close()
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
        GlobalHydra.instance().clear()
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
    parts = [
        f"{sum(counts.values())} jobs",
        f"{counts['skipped']} skipped",
        f"{run} run ({counts['ok']} ok, {counts['diverged']} diverged, {counts['failed']} failed)",
    ]
    if counts["running_elsewhere"]:
        parts.append(f"{counts['running_elsewhere']} running elsewhere (locked by another sweep)")
    if counts["outside_grid"]:
        parts.append(f"{counts['outside_grid']} not applicable (beyond the beta grid, or a method without beta)")
    if counts["not_applicable"]:
        parts.append(f"{counts['not_applicable']} not applicable (a point the paper does not have)")
    if counts["deferred"]:
        parts.append(f"{counts['deferred']} deferred (would not finish within --time-limit: run the same command "
                     "again to go on)")
    return "sweep: " + ", ".join(parts)


DRY_RUN_WORDS = {
    "new": "new",
    "rerun": "will re-run (forced or failed before)",
    "done": "done (skipped)",
    "failed": "failed (skipped; --retry-failed re-runs it)",
    "outside_grid": "not applicable (beyond the beta grid, or a method without beta)",
    "running_elsewhere": "running elsewhere (locked by another sweep)",
    "not_applicable": "not applicable (a point the paper does not have)",
    "invalid": "INVALID",
}


class PlannedPoint(NamedTuple):
    shown: str  # the point's swept overrides
    name: str | None  # its run name (None when it cannot be named)
    state: str  # a DRY_RUN_WORDS key
    reason: str | None = None  # why an invalid point is invalid
    overrides: tuple = ()  # every override of the point
    config: dict | None = None  # a new point's resolved config (the cost estimate's input)


# Hydra composes a point in ~0.1 s (seconds on a loaded machine), too slow for a paper-size grid (thousands of
# points) to be composed twice. plan_sweep composes once per distinct set of group choices (experiment, method,
# dlm_data, model=...) and applies the point's value overrides (key.sub=value, seed=...) as Hydra's config loader
# does after composing the defaults list (OmegaConf.update, merge=True); tests/integration/test_sweep_real_runs.py
# checks the result against Hydra's own composition of every point. From this many points on it reports progress.
PROGRESS_FROM = 500


def _is_group_override(key: str) -> bool:
    from ..config.schema import GROUPS

    return key.startswith("hydra/") or key in GROUPS + ("experiment",)


def plan_sweep(overrides: list[str], compose_each: bool = False) -> list[PlannedPoint]:
    """Every grid point as a PlannedPoint, nothing launched and nothing written: its run name and state, each
    point validated as its run would validate it before loading data (harness.validate_point), so a bad point is
    `invalid` with its one-line reason. The grid is expanded as Hydra's BasicSweeper does (hydra.sweeper.params of
    the composed config, then the command-line sweeps). compose_each: compose every point with Hydra (slow; tests)."""
    from hydra import version
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.types import RunMode
    from omegaconf import OmegaConf, open_dict

    from ..config.schema import conf_dir, register_configs

    register_configs()
    version.setbase("1.3")
    GlobalHydra.instance().clear()
    hydra = Hydra.create_main_hydra2("dlm_bench", create_config_search_path(str(conf_dir())))
    out = []
    try:
        master = hydra.compose_config("config", overrides, run_mode=RunMode.MULTIRUN, with_log_configuration=False)
        params = [f"{k}={v}" for k, v in (master.hydra.sweeper.get("params") or {}).items()]
        params += list(OmegaConf.to_container(master.hydra.overrides.task, resolve=False))
        parser = OverridesParser.create(config_loader=hydra.config_loader)
        parsed = parser.parse_overrides(params)
        sweeps = {o.get_key_element() for o in parsed if o.is_sweep_override()}
        points = [point for batch in BasicSweeper.split_arguments(parsed, None) for point in batch]
        every = max(1, len(points) // 10) if len(points) >= PROGRESS_FROM else 0
        composed: dict[tuple, object] = {}
        for i, point in enumerate(points):
            if every and i and i % every == 0:
                print(f"sweep: checked {i} of {len(points)} grid points", file=sys.stderr, flush=True)
            shown = " ".join(p for p in point if p.partition("=")[0] in sweeps)
            out.append(_plan_point(hydra, master, parser, list(point), shown, composed, compose_each))
    finally:
        GlobalHydra.instance().clear()
    return out


def _plan_point(hydra, master, parser, point: list[str], shown: str, composed: dict, compose_each: bool):
    import copy

    from hydra.errors import HydraException
    from omegaconf import OmegaConf, open_dict
    from omegaconf.errors import OmegaConfBaseException

    from ..data import DatasetError
    from ..run import validate_point

    try:
        if compose_each:
            cfg = hydra.config_loader.load_sweep_config(master, point)
        else:
            groups = tuple(o for o in point if _is_group_override(o.partition("=")[0].lstrip("+~")))
            if groups not in composed:
                composed[groups] = hydra.config_loader.load_sweep_config(master, list(groups))
            cfg = copy.deepcopy(composed[groups])
            for o in parser.parse_overrides([o for o in point if o not in groups]):
                if not o.key_or_group.startswith("hydra."):
                    OmegaConf.update(cfg, o.key_or_group, o.value(), merge=True)
        with open_dict(cfg):
            del cfg["hydra"]  # what the task function sees
        OmegaConf.to_container(cfg, resolve=True)  # interpolation errors (${nope}) show here
        # cfg is this point's own copy: named first (run_name copies once more), then its state, then validated
        # in place as its run would be (each DictConfig copy costs tens of ms: thousands of points add up)
        try:
            apply_beta_grid_flag(cfg.objective)
        except OutsideBetaGrid:
            return PlannedPoint(shown, None, "outside_grid", None, tuple(point))
        name = run_name(cfg)
        state, _ = point_state(cfg, run_dir_for(cfg) if cfg.run_dir else Path(cfg.results_dir) / cfg.experiment / name)
        validate_point(cfg, overrides=point)
        config = config_dict(cfg) if state in ("new", "rerun") else None
        return PlannedPoint(shown, name, state, None, tuple(point), config)
    except NotApplicable as err:
        return PlannedPoint(shown, None, "not_applicable", str(err), tuple(point))
    except (ConfigError, DatasetError, ValueError, HydraException, OmegaConfBaseException) as err:
        return PlannedPoint(shown, None, "invalid", _one_line(err), tuple(point))


def _one_line(err: BaseException) -> str:
    text = " ".join(ln.strip() for ln in str(err).splitlines() if ln.strip()
                    and not ln.strip().startswith(("full_key:", "object_type=", "reference_type=")))
    return text or type(err).__name__


SHORT = {"outside_grid": "not applicable", "not_applicable": "not in the paper"}


def dry_run_lines(plan: list[PlannedPoint]) -> list[str]:
    width = max((len(p.shown) for p in plan), default=0)
    lines = [f"{i:4d}  {p.shown.ljust(width)}  {p.name or '-'}  {DRY_RUN_WORDS[p.state]}"
             + (f": {p.reason}" if p.reason else "") for i, p in enumerate(plan)]
    counts = Counter(p.state for p in plan)
    lines.append(f"dry run: {len(plan)} grid points, " + ", ".join(f"{counts[s]} {SHORT.get(s, s.replace('_', ' '))}"
                                                             for s in DRY_RUN_WORDS if counts[s]) + "; nothing was run")
    return lines


def invalid_points_message(plan: list[PlannedPoint]) -> str | None:
    """One line naming the first invalid point and its reason (and how many there are), or None."""
    bad = [(i, p) for i, p in enumerate(plan) if p.state == "invalid"]
    if not bad:
        return None
    i, p = bad[0]
    more = f" ({len(bad)} of {len(plan)} grid points are invalid; --dry-run lists them)" if len(bad) > 1 else ""
    return f"grid point {i} ({p.shown or ' '.join(p.overrides)}) is invalid: {p.reason}{more}; nothing was run"


def estimate_line(plan: list[PlannedPoint]) -> str:
    """The projected CPU time of the plan's new points (cost_estimate.py), learnt from the finished runs beside."""
    from .cost_estimate import Estimate, estimate

    new = [p.config for p in plan if p.config is not None]
    if not new:
        return Estimate().line()
    roots = {Path(c["results_dir"]) / c["experiment"] for c in new}
    points = [(c, c["model"].get("likelihood")) for c in new]
    est = Estimate()
    for root in sorted(roots):
        part = estimate([pt for pt in points if Path(pt[0]["results_dir"]) / pt[0]["experiment"] == root], root)
        for field in ("seconds", "from_runs", "from_model", "unknown", "calibrated_on", "beyond_grid"):
            setattr(est, field, getattr(est, field) + getattr(part, field))
    return est.line()
