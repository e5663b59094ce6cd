"""What a sweep job reads of its Hydra job, read here (the sweep is where the Hydra job is) and passed to the run
harness, which reads no Hydra state: the sweep's beta indices (run.execute's `beta_indices`: a batched beta group,
run/batched.py, trains those members, not the full grid); the job's overrides come from compose.job_overrides. A command-line `objective.beta_index=<sweep>` reaches the jobs (also joblib /
SLURM workers) in the environment variable INDICES_ENV (launch.run_sweep); else the experiment's
hydra.sweeper.params give them."""

from __future__ import annotations

import os

from .compose import swept_values

INDICES_ENV = "DLM_BENCH_SWEEP_BETA_INDICES"


def command_line_beta_indices(overrides: list[str]) -> str | None:
    """run_sweep: a command-line `objective.beta_index=<sweep>` is passed to the jobs (also joblib / SLURM
    workers) in the environment variable INDICES_ENV; this is its value (None: not on the command line)."""
    values = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0].lstrip("+~") == "objective.beta_index"
              and "=" in o]
    return values[-1] if values else None


def sweep_beta_indices() -> list[int] | None:
    """The beta indices of the sweep this job belongs to: the command line's objective.beta_index sweep, else
    the experiment's hydra.sweeper.params; None outside a Hydra job (then the group is the full grid)."""
    values = swept_values("objective.beta_index", os.environ.get(INDICES_ENV))
    return None if values is None else [int(v) for v in values]
