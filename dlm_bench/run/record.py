"""The run record: the one place a RunRecord is built (from the config and the model family's Outcome), the one
place a run directory's files are written (artifacts, curve.csv, then run.json last, atomically), and the one progress
line per finished run (a sweep's jobs may run in other processes: each prints its own)."""

from __future__ import annotations

import errno
import os
import tempfile
import traceback
from pathlib import Path

from omegaconf import DictConfig

from ..errors import ConfigError, ResultsNotWritten
from ..registry.models import method_of, objective_label, paper_of
from ..results.contract import RunRecord, env_info, write_curve_csv, write_run_json
from ..results.outcome import Outcome
from ..results.checkpoint_files import TMP_PREFIX, remove_checkpoints
from ..util.logline import log_line
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
        label_map=getattr(dataset, "label_map", None),
    )


PROBE_BYTES = 2 * 2**20  # a run directory that cannot take this much fails before training, not after
STALE_TMP = (".run.json.", ".curve.csv.", TMP_PREFIX)  # prefixes of atomic-write temp files (results, checkpoints)


def probe_run_dir(run_dir: Path) -> Path | None:
    """Before training: create `run_dir`, remove temp files an interrupted write left there (a SIGKILL before the
    final rename), and write, fsync and delete a PROBE_BYTES probe, so a full disk, a file-size limit, a read-only
    or non-directory run_dir fail here in one line (ConfigError) rather than after training. Returns the topmost
    folder it created (None: run_dir existed), so a run that stops before writing (refused, interrupted) can
    remove what it made (remove_if_empty(run_dir, created))."""
    created = None if run_dir.exists() else topmost_missing(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        for tmp in run_dir.iterdir():
            if tmp.name.startswith(STALE_TMP) and tmp.name.endswith(".tmp"):
                tmp.unlink(missing_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=run_dir)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(bytes(PROBE_BYTES))
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            os.unlink(probe)
    except OSError as err:
        if created:
            remove_if_empty(run_dir, created)
        reason = err.strerror or type(err).__name__
        raise ConfigError(f"cannot write results to {run_dir}: {reason}; set results_dir= (or run_dir=) to a "
                          "writable directory with a few MB free") from None
    return created


def topmost_missing(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.parent.exists() and path.parent != path.parent.parent:
        path = path.parent
    return path


def remove_if_empty(run_dir: Path, top: Path | None = None) -> None:
    """Remove `run_dir` if empty, then its empty parents up to and including `top` (the folders a run created)."""
    path = Path(os.path.abspath(run_dir))
    top = path if top is None else Path(os.path.abspath(top))
    while True:
        try:
            path.rmdir()
        except FileNotFoundError:
            pass  # removed already (a lock's folder, by its release)
        except OSError:
            return
        if path == top or top not in path.parents:
            return
        path = path.parent


def _write_files(run_dir: Path, record: RunRecord, out: Outcome, tb: str | None) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    for write in out.artifacts:
        write(run_dir)
    if tb:
        (run_dir / "traceback.txt").write_text(tb)
    write_curve_csv(run_dir, out.curve)
    write_run_json(run_dir, record)
    remove_checkpoints(run_dir)  # the run is done: its training checkpoints (results/checkpoint_files.py) go


def write_run(run_dir: Path, record: RunRecord, out: Outcome, tb: str | None = None) -> Path:
    """Extra files, traceback.txt of a failed run, curve.csv, then run.json (its presence marks the run done).
    If that fails after all (the disk filled during training), nothing computed is lost: the files go to
    `<results_dir>/.rescued/<run name>/` (else `<tmp>/dlm-bench-rescued/<run name>/`), the partial files are
    removed from `run_dir` (so the point runs again), and ResultsNotWritten names the rescue place."""
    run_dir = Path(run_dir)
    try:
        _write_files(run_dir, record, out, tb)
        return run_dir
    except OSError as err:
        reason = err.strerror or errno.errorcode.get(err.errno or 0) or type(err).__name__
        written = [run_dir / "curve.csv", run_dir / "traceback.txt"]
        for path in written:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
    results_dir = (record.config or {}).get("results_dir") or "."
    for root in (Path(results_dir) / ".rescued", Path(tempfile.gettempdir()) / "dlm-bench-rescued"):
        target = root / run_dir.name
        try:
            _write_files(target, record, out, tb)
        except OSError:
            continue
        raise ResultsNotWritten(f"could not write the run directory {run_dir} ({reason}); the finished run's "
                                f"run.json and curve.csv are in {target} (copy them there to keep the run)")
    raise ResultsNotWritten(f"could not write the run directory {run_dir} ({reason}), nor any rescue place; "
                            f"status {record.status}, metrics {record.metrics}")


def record_failure(out: Outcome, err: BaseException) -> str:
    """Mark `out` failed by `err`; returns the traceback text (err's own, so a caller may record an exception it
    caught earlier: a batched member's evaluation error, models/beta_group.py)."""
    out.status, out.error = "failed", f"{type(err).__name__}: {err}"
    return "".join(traceback.format_exception(type(err), err, err.__traceback__))


def failure_record(cfg: DictConfig, err: BaseException) -> tuple[RunRecord, Path]:
    """A sweep point that could not start (bad data or config for this grid point), recorded as failed."""
    from .. import data
    from .naming import run_dir_for

    try:
        run_dir = run_dir_for(cfg)
    except (ConfigError, data.DatasetError):  # its task defaults cannot be resolved: name it as composed
        run_dir = run_dir_for(cfg, resolve=False)
    out = Outcome(status="failed", error=f"{type(err).__name__}: {err}")
    record = build_record(cfg, out)
    write_run(run_dir, record, out)
    return record, run_dir


def progress(run_dir: Path, status: str, metrics: dict, wall_s, error: str | None = None) -> None:
    shown = " ".join(f"{k}={metrics[k]:.4f}" for k in ("test_nll", "test_mse", "test_error") if k in metrics)
    extra = f" ({wall_s:.1f} s)" if wall_s is not None else ""
    log_line(" ".join(part for part in (status, run_dir.name, (shown + extra).strip(), error) if part))
