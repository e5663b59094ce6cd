"""What a model family hands the run harness (dlm_bench/run/harness.py): the facts of one fit and evaluation.

The harness owns everything around it (validation, seeding, device and dtype, data, the run directory, timing, the
record, writing run.json and curve.csv, failures, SIGTERM); a model family fills an `Outcome` as it learns things
(dataset facts first, then training, then metrics), so a failure part-way still leaves a record that says how far
the run got. A leaf: it imports nothing from dlm_bench.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


@dataclass
class Outcome:
    status: str = "ok"  # ok | diverged | failed (a failed fit that did not raise, e.g. a failed stage 1)
    error: str | None = None
    metrics: dict = field(default_factory=dict)
    train: dict = field(default_factory=dict)  # run.json's `train`; the harness adds device, dtype, threads
    curve: list = field(default_factory=list)  # curve.csv rows
    # run.json fields a family knows better than the config; None = the harness's default from the config
    task: str | None = None
    likelihood: str | None = None
    estimator: str | None = None
    objective: str | None = None
    train_size: int | None = None
    num_inducing: int | None = None
    split: str | None = None
    hyperparameters: str | None = None
    # extra files (predictive.json, points.csv): written into the run directory before run.json, which comes last
    artifacts: list[Callable[[Path], object]] = field(default_factory=list)
