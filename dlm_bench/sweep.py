"""`dlm-bench sweep`: a Hydra multirun over a grid, resumable and loss-free.

Each job is `sweep_job(cfg)`: it skips grid points whose run.json already says ok / diverged (and failed,
unless resume.retry_failed), records any failure as a failed run.json, and returns its outcome so the
parent can count skipped / run / failed jobs, whichever launcher (basic, joblib, submitit_slurm) ran it.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

from omegaconf import DictConfig

OUTCOMES = ("skipped", "ok", "diverged", "failed", "outside_grid")


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


def sweep_job(cfg: DictConfig) -> str:
    """One grid point. Never raises for a failing configuration (it is recorded); returns an OUTCOME."""
    from .beta import OutsideBetaGrid, apply_beta_grid_flag
    from .runner import execute, failure_record, run_dir_for

    _set_threads(cfg)
    try:
        apply_beta_grid_flag(cfg.objective)
    except OutsideBetaGrid:
        return "outside_grid"
    run_dir = run_dir_for(cfg)
    status = _existing_status(run_dir)
    if status is not None and not cfg.resume.force:
        if status in ("ok", "diverged") or (status == "failed" and not cfg.resume.retry_failed):
            return "skipped"
    try:
        record, _ = execute(cfg)
        _progress(run_dir, record.status, record.metrics, record.train.get("wall_s"))
        return record.status
    except OutsideBetaGrid:
        return "outside_grid"
    except Exception as err:  # config/data errors of this grid point: recorded, the sweep goes on
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


def run_sweep(overrides: list[str]) -> Counter:
    """Compose with `overrides` in multirun mode and launch every job; returns the outcome counts."""
    from hydra import version
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path
    from hydra.core.global_hydra import GlobalHydra

    from .config import conf_dir, register_configs

    register_configs()
    version.setbase("1.3")
    GlobalHydra.instance().clear()
    # Hydra's public entry point (@hydra.main) exits the process and drops the jobs' return values;
    # the internal Hydra object returns them, which the skipped/run/failed summary needs.
    hydra = Hydra.create_main_hydra2("dlm_bench", create_config_search_path(str(conf_dir())))
    try:
        batches = hydra.multirun(config_name="config", task_function=sweep_job, overrides=overrides)
    finally:
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
    if counts["outside_grid"]:
        parts.append(f"{counts['outside_grid']} not applicable (beyond the beta grid, or a method without beta)")
    return "sweep: " + ", ".join(parts)
