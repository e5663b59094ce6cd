"""`dlm-bench sweep`: a Hydra multirun over a grid, resumable and loss-free.

Each job is `sweep_job(cfg)`: it skips grid points whose run.json already says ok / diverged (and failed,
unless resume.retry_failed), records any failure as a failed run.json, and returns its outcome so the
parent can count skipped / run / failed jobs, whichever launcher (basic, joblib, submitit_slurm) ran it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from omegaconf import DictConfig

from .errors import Terminated  # noqa: F401 (re-exported)

OUTCOMES = ("skipped", "ok", "diverged", "failed", "outside_grid", "running_elsewhere")

# set by SIGTERM in this process. A joblib worker that unwound a job on SIGTERM is handed the next job by loky
# before the parent's stop_workers() kills it; that job must not start (it would take locks it never releases)
_terminated = False


def _existing_status(run_dir: Path) -> str | None:
    try:
        return json.loads((run_dir / "run.json").read_text()).get("status")
    except (OSError, ValueError):
        return None


def _set_threads(cfg: DictConfig) -> int:
    import torch

    from .threads import set_cores

    cpus = cfg.launcher.cpus
    if cpus is None:
        cpus = max(1, (os.cpu_count() or 1) // max(1, cfg.launcher.n_jobs))
    torch.set_num_threads(cpus)
    set_cores(cpus)  # the run then takes 1 thread or these `cpus` (dlm_bench/threads.py)
    return cpus


def point_state(cfg: DictConfig) -> tuple[str, Path | None]:
    """What a sweep does with this grid point, before it runs: (state, run_dir) with state one of
    new | done | failed | rerun | not_applicable | running_elsewhere. Mutates cfg.objective like a run."""
    from .beta import OutsideBetaGrid, apply_beta_grid_flag
    from .locks import holder
    from .runner import run_dir_for

    try:
        apply_beta_grid_flag(cfg.objective)
    except OutsideBetaGrid:
        return "not_applicable", None
    run_dir = run_dir_for(cfg)
    status = _existing_status(run_dir)
    if status is not None and not cfg.resume.force:
        if status in ("ok", "diverged"):
            return "done", run_dir
        if status == "failed" and not cfg.resume.retry_failed:
            return "failed", run_dir
    if holder(run_dir) is not None:
        return "running_elsewhere", run_dir
    return ("new" if status is None else "rerun"), run_dir


def sweep_job(cfg: DictConfig) -> str:
    """One grid point. Never raises for a failing configuration (it is recorded); returns an OUTCOME."""
    from .beta import OutsideBetaGrid
    from .locks import RunLock
    from .runner import execute

    if _terminated:
        raise Terminated("signal 15: this worker was stopped")
    _set_threads(cfg)
    state, run_dir = point_state(cfg)
    if state == "not_applicable":
        return "outside_grid"
    if state in ("done", "failed"):
        return "skipped"
    from .batched import requested, sweep_group_job

    if requested(cfg):  # objective.beta_batch: the first job of a beta group trains the group
        return sweep_group_job(cfg, run_dir)
    if threading.current_thread() is threading.main_thread():
        # a joblib worker stopped by stop_workers() unwinds through `finally` and releases its lock
        signal.signal(signal.SIGTERM, _raise_terminated)
    lock = RunLock(run_dir)
    if not lock.acquire():
        _progress(run_dir, "running elsewhere", {}, None)
        return "running_elsewhere"
    try:
        if point_state(cfg)[0] in ("done", "failed"):  # another sweep finished it before we locked
            return "skipped"
        try:
            record, _ = execute(cfg)
            _progress(run_dir, record.status, record.metrics, record.train.get("total_wall_s", record.train.get("wall_s")))
            return record.status
        except OutsideBetaGrid:
            return "outside_grid"
        except Exception as err:  # config/data errors of this grid point: recorded, the sweep goes on
            return failed_job(cfg, run_dir, err)
    finally:
        lock.release()


def failed_job(cfg: DictConfig, run_dir: Path, err: BaseException) -> str:
    """A grid point that raised: its failed run.json and progress line; the sweep goes on."""
    from .runner import failure_record

    failure_record(cfg, err)
    _progress(run_dir, "failed", {}, None, f"{type(err).__name__}: {err}")
    return "failed"


def _progress(run_dir: Path, status: str, metrics: dict, wall_s, error: str | None = None) -> None:
    """One line per finished job (jobs may run in other processes; each prints its own line)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        num = f"#{HydraConfig.get().job.num} "
    except Exception:  # outside a Hydra job
        num = ""
    shown = " ".join(f"{k}={metrics[k]:.4f}" for k in ("test_nll", "test_mse", "test_error") if k in metrics)
    extra = f" ({wall_s:.1f} s)" if wall_s is not None else ""
    print(f"[dlm-bench] {num}{status} {run_dir.name} {shown}{extra}{' ' + error if error else ''}", flush=True)




def _raise_terminated(signum, frame):
    global _terminated
    _terminated = True
    # workers first, while they can still unwind (release their run locks): joblib SIGKILLs them as soon
    # as the exception reaches its Parallel loop
    stop_workers(keep_trackers=True)  # joblib's shutdown still talks to its resource trackers
    raise Terminated(f"signal {signum}")


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc; elsewhere none are found)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            ppid = int(text[text.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _is_tracker(pid: int) -> bool:
    try:
        return b"resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def stop_workers(grace_s: float = 3.0, keep_trackers: bool = False) -> list[int]:
    """SIGTERM every descendant (joblib's loky workers and resource trackers), SIGKILL what is left after
    `grace_s`. Loky workers are not in a process group of their own and outlive a killed parent otherwise."""
    pids = _descendants(os.getpid())
    if keep_trackers:
        pids = [p for p in pids if not _is_tracker(p)]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        for pid in list(alive):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:  # our own child: reap it
                    alive.remove(pid)
                    continue
            except ChildProcessError:  # not our child (grandchild): gone once /proc forgets it
                pass
            if not Path(f"/proc/{pid}").exists() or _zombie(pid):
                alive.remove(pid)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids


def _zombie(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        return text[text.rindex(")") + 2] == "Z"
    except (OSError, ValueError, IndexError):
        return True


def run_sweep(overrides: list[str]) -> Counter:
    """Compose with `overrides` in multirun mode and launch every job; returns the outcome counts."""
    from hydra import version
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path
    from hydra.core.global_hydra import GlobalHydra

    from .config import conf_dir, register_configs

    global _terminated
    _terminated = False  # a new sweep in this process (tests, notebooks) after an earlier one was stopped
    register_configs()
    version.setbase("1.3")
    GlobalHydra.instance().clear()
    # Hydra's public entry point (@hydra.main) exits the process and drops the jobs' return values;
    # the internal Hydra object returns them, which the skipped/run/failed summary needs.
    hydra = Hydra.create_main_hydra2("dlm_bench", create_config_search_path(str(conf_dir())))
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if main_thread else None
    from .batched import announce_beta_indices

    restore_env = announce_beta_indices(overrides)  # the beta group of objective.beta_batch (batched.py)
    try:
        batches = hydra.multirun(config_name="config", task_function=sweep_job, overrides=overrides)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: no worker may go on training without us
        stop_workers()
        raise
    finally:
        restore_env()
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
    return "sweep: " + ", ".join(parts)


DRY_RUN_WORDS = {
    "new": "new",
    "rerun": "will re-run (forced or failed before)",
    "done": "done (skipped)",
    "failed": "failed (skipped; --retry-failed re-runs it)",
    "not_applicable": "not applicable (beyond the beta grid, or a method without beta)",
    "running_elsewhere": "running elsewhere (locked by another sweep)",
}


# composing a point costs ~0.1 s (Hydra's config loader), so a paper-size grid (thousands of points) takes
# minutes: from this many points on, a dry run says how far it is, on stderr
DRY_RUN_PROGRESS_FROM = 500


def plan_sweep(overrides: list[str]) -> list[tuple[str, str, str]]:
    """`dlm-bench sweep --dry-run`: every grid point as (overrides, run name, state), nothing launched and
    nothing written. The grid is expanded as Hydra's BasicSweeper does (hydra.sweeper.params of the composed
    config, then the command-line sweeps) and each point composed as its launcher would compose it."""
    from hydra import version
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.types import RunMode
    from omegaconf import OmegaConf, open_dict

    from .config import conf_dir, register_configs
    from .runner import run_name

    register_configs()
    version.setbase("1.3")
    GlobalHydra.instance().clear()
    hydra = Hydra.create_main_hydra2("dlm_bench", create_config_search_path(str(conf_dir())))
    out = []
    try:
        master = hydra.compose_config("config", overrides, run_mode=RunMode.MULTIRUN, with_log_configuration=False)
        params = [f"{k}={v}" for k, v in (master.hydra.sweeper.get("params") or {}).items()]
        params += list(OmegaConf.to_container(master.hydra.overrides.task, resolve=False))
        parsed = OverridesParser.create(config_loader=hydra.config_loader).parse_overrides(params)
        sweeps = {o.get_key_element() for o in parsed if o.is_sweep_override()}
        points = [point for batch in BasicSweeper.split_arguments(parsed, None) for point in batch]
        every = max(1, len(points) // 10) if len(points) >= DRY_RUN_PROGRESS_FROM else 0
        for i, point in enumerate(points):
            if every and i and i % every == 0:
                print(f"dry run: composed {i} of {len(points)} grid points", file=sys.stderr, flush=True)
            cfg = hydra.config_loader.load_sweep_config(master, list(point))
            with open_dict(cfg):
                del cfg["hydra"]  # what the task function sees
            state, _ = point_state(cfg)
            shown = " ".join(p for p in point if p.partition("=")[0] in sweeps)
            out.append((shown, run_name(cfg), state))
    finally:
        GlobalHydra.instance().clear()
    return out


def dry_run_lines(plan: list[tuple[str, str, str]]) -> list[str]:
    width = max((len(p) for p, _, _ in plan), default=0)
    lines = [f"{i:4d}  {p.ljust(width)}  {name}  {DRY_RUN_WORDS[state]}" for i, (p, name, state) in enumerate(plan)]
    counts = Counter(state for _, _, state in plan)
    lines.append(f"dry run: {len(plan)} grid points, " + ", ".join(f"{counts[s]} {s.replace('_', ' ')}"
                                                             for s in DRY_RUN_WORDS if counts[s]) + "; nothing was run")
    return lines
