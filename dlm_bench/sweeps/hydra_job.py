"""What a sweep job reads of its Hydra job, read here (the sweep is where the Hydra job is) and passed to the run
harness, which reads no Hydra state: the job's overrides (run.execute's `overrides`, for the validation of group
choices) and the sweep's beta indices (run.execute's `beta_indices`: a batched beta group, run/batched.py, trains
those members, not the full grid). A command-line `objective.beta_index=<sweep>` reaches the jobs (also joblib /
SLURM workers) in the environment variable INDICES_ENV (launch.run_sweep); else the experiment's
hydra.sweeper.params give them."""

from __future__ import annotations

import os

INDICES_ENV = "DLM_BENCH_SWEEP_BETA_INDICES"


def job_overrides() -> list[str]:
    """The overrides of the Hydra job this process runs (a sweep's grid point), or none outside a job."""
    try:
        from hydra.core.hydra_config import HydraConfig

        return list(HydraConfig.get().overrides.task)
    except Exception:  # not inside a Hydra job (dlm-bench run composes and checks its own overrides)
        return []


def command_line_beta_indices(overrides: list[str]) -> str | None:
    """run_sweep: a command-line `objective.beta_index=<sweep>` is passed to the jobs (also joblib / SLURM
    workers) in the environment variable INDICES_ENV; this is its value (None: not on the command line)."""
    values = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0].lstrip("+~") == "objective.beta_index"
              and "=" in o]
    return values[-1] if values else None


def sweep_beta_indices() -> list[int] | None:
    """The beta indices of the sweep this job belongs to: the command line's objective.beta_index sweep, else
    the experiment's hydra.sweeper.params; None outside a Hydra job (then the group is the full grid)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        params = HydraConfig.get().sweeper.get("params") or {}
    except Exception:  # not inside a Hydra job
        return None
    value = os.environ.get(INDICES_ENV) or params.get("objective.beta_index")
    if value is None:
        return None
    from hydra.core.override_parser.overrides_parser import OverridesParser

    o = OverridesParser.create().parse_override(f"objective.beta_index={value}")
    return [int(v) for v in o.sweep_iterator()] if o.is_sweep_override() else [int(o.value())]
