"""The run harness: one run of any model kind, the same path for all five papers.

    execute(cfg, beta_indices=None, overrides=None) -> (RunRecord, run_dir)

1. validation (before anything is loaded): the beta grid flag, the family's task defaults (ModelSpec.task_defaults),
   then the validation pipeline (validation.validate_run: numbers, group choices, combination rules, PAC settings, the
   family's declared check); the results directory is created and probed;
2. a batched beta grid (objective.beta_batch, where the model's family offers one: ModelSpec.beta_group) goes to
   run/batched.py, which hands the group to the family and writes every member through the same record writer;
3. seeding, device and dtype (RunContext.create); data: the dataset is loaded and the family's data check runs;
4. the model family's plugin (ModelSpec.execute(cfg, ctx)) fits and evaluates, filling ctx.outcome; it calls
   ctx.apply_threads (the thread rule, recorded) and ctx.begin_training (the clock; from there on an exception is a
   failed run: recorded with its traceback, never raised);
5. the record (run/record.py build_record) and the files (write_run: artifacts, curve.csv, run.json last). The run
   directory itself is probed before step 4 (probe_run_dir: created, stale temp files removed, a 2 MB probe
   written, fsynced and deleted); if the final write still fails the files are rescued to
   `<results_dir>/.rescued/<run name>/` and ResultsNotWritten names the place.

ConfigError, DatasetError and OutsideBetaGrid raised before training (steps 1-4) propagate: `dlm-bench run` prints
one line and exits 2; a sweep records the point as failed (or not applicable). SIGTERM raises Terminated (during
training at the end of the iteration, after saving the training checkpoint, training/checkpoint.py): no run.json
is written, and the point's next run resumes from the checkpoint.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from ..config.beta_grid import OutsideBetaGrid, apply_beta_grid_flag
from ..data import DatasetError
from ..errors import ConfigError
from ..registry.models import model_spec
from ..registry.validation import check_writable, validate_run
from ..results.contract import RunRecord
from . import batched, signals
from .context import RunContext
from .naming import checkpoint_identity, run_dir_for
from .record import build_record, probe_run_dir, record_failure, remove_if_empty, write_run


def validate_point(cfg: DictConfig, overrides: list[str] | None = None):
    """Step 1 on `cfg` (mutated like a run: beta grid flag, task defaults): its ModelSpec, or a one-line error.
    overrides: the point's command-line overrides (a sweep job's: sweeps/compose.py; default none), for
    validation.check_choices."""
    spec = model_spec(cfg)
    apply_beta_grid_flag(cfg.objective)
    if spec.task_defaults is not None:  # the Trainer models: likelihood, mean and protocol from the task
        spec.task_defaults(cfg)
    validate_run(cfg, [] if overrides is None else overrides)
    return spec


def execute(cfg: DictConfig, beta_indices: list[int] | None = None,
            overrides: list[str] | None = None) -> tuple[RunRecord, Path]:
    """One run. Passed in by a sweep job (sweeps/compose.py; the harness reads no Hydra state): beta_indices, the
    sweep's beta indices, the members of a batched beta group (None: the full grid); overrides, the job's, for
    validate_point."""
    spec = validate_point(cfg, overrides)
    previous = signals.install()
    try:
        if batched.requested(cfg):  # objective.beta_batch: the whole beta group in one model (its family's)
            return batched.execute_group(cfg, spec, execute, beta_indices)
        return _execute_single(cfg, spec)
    finally:
        signals.restore(previous)


def _execute_single(cfg: DictConfig, spec) -> tuple[RunRecord, Path]:
    run_dir = run_dir_for(cfg)
    check_writable(run_dir.parent)  # before any training: results that cannot be written are lost
    ctx = RunContext.create(cfg, spec, run_dir)
    ctx.checkpoint_identity = checkpoint_identity(cfg)
    ctx.load()
    created = probe_run_dir(run_dir)
    tb = None
    try:
        spec.execute(cfg, ctx)
    except (ConfigError, DatasetError, OutsideBetaGrid) as err:
        if not ctx.training:
            if created:
                remove_if_empty(run_dir, created)
            raise
        tb = record_failure(ctx.outcome, err)
    except Exception as err:  # recorded, so a sweep keeps going; the CLI reports it
        tb = record_failure(ctx.outcome, err)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM before run.json: no empty folder (a checkpoint stays)
        if created:
            remove_if_empty(run_dir, created)
        raise
    record = build_record(cfg, ctx.outcome, ctx.dataset, ctx.device, ctx.threads)
    write_run(run_dir, record, ctx.outcome, tb)
    return record, run_dir
