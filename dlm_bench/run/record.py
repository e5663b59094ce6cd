"""The run record: the one place a RunRecord is built (from the config and the model family's Outcome) and the one
place a run directory's files are written (artifacts, curve.csv, then run.json last, atomically)."""

from __future__ import annotations

import traceback
from pathlib import Path

from omegaconf import DictConfig

from ..outcome import Outcome
from ..registry import method_of, objective_label, paper_of
from ..results import RunRecord, env_info, write_curve_csv, write_run_json
from .naming import config_dict

TRAIN_DEFAULTS = {"iterations": 0, "epochs": 0, "converged": False, "wall_s": 0.0, "final_loss": None}


def build_record(cfg: DictConfig, out: Outcome, dataset=None, device=None, threads: int | None = None) -> RunRecord:
    hyperparameters = out.hyperparameters or cfg.objective.hyperparameters.value
    estimator = out.estimator or cfg.estimator.name
    train = {**TRAIN_DEFAULTS, **out.train}
    train.setdefault("device", None if device is None else str(device))
    train.setdefault("dtype", cfg.dtype.value)
    if threads is not None:
        train.setdefault("threads", threads)
    return RunRecord(
        status=out.status, error=out.error, paper=paper_of(cfg), experiment=cfg.experiment,
        dataset=dataset.name if dataset is not None else cfg.dataset.name, task=out.task, model=cfg.model.name,
        objective=out.objective or objective_label(cfg), estimator=estimator, likelihood=out.likelihood,
        beta=float(cfg.objective.beta), seed=int(cfg.seed), split=out.split or cfg.protocol.name,
        train_size=out.train_size if out.train_size is not None or dataset is not None else cfg.protocol.train_size,
        num_inducing=out.num_inducing, hyperparameters=hyperparameters,
        method=method_of(cfg, hyperparameters, estimator), metrics=out.metrics, train=train,
        config=config_dict(cfg), env=env_info(),
    )


def write_run(run_dir: Path, record: RunRecord, out: Outcome, tb: str | None = None) -> None:
    """Extra files, traceback.txt of a failed run, curve.csv, then run.json (its presence marks the run done)."""
    run_dir = Path(run_dir)
    if out.artifacts or tb:
        run_dir.mkdir(parents=True, exist_ok=True)
    for write in out.artifacts:
        write(run_dir)
    if tb:
        (run_dir / "traceback.txt").write_text(tb)
    write_curve_csv(run_dir, out.curve)
    write_run_json(run_dir, record)


def record_failure(out: Outcome, err: BaseException) -> str:
    """Mark `out` failed by `err`; returns the traceback text."""
    out.status, out.error = "failed", f"{type(err).__name__}: {err}"
    return traceback.format_exc()


def failure_record(cfg: DictConfig, err: BaseException) -> tuple[RunRecord, Path]:
    """A sweep point that could not start (bad data or config for this grid point), recorded as failed."""
    from .. import data
    from ..errors import ConfigError
    from .naming import run_dir_for

    try:
        run_dir = run_dir_for(cfg)
    except (ConfigError, data.DatasetError):  # its task defaults cannot be resolved: name it as composed
        run_dir = run_dir_for(cfg, resolve=False)
    out = Outcome(status="failed", error=f"{type(err).__name__}: {err}")
    record = build_record(cfg, out)
    write_run(run_dir, record, out)
    return record, run_dir
