"""Declared capabilities: one spec per model, objective and estimator that says what it is and what it combines
with. A leaf (the spec classes only). The registries: `registry.MODELS` (every model kind, with the plugin the run
harness calls), `objectives.OBJECTIVES`, `estimators.ESTIMATORS`, `likelihoods.LIKELIHOODS`; `combination_rules.py`
checks a configuration against them. A new model or estimator is its own file + one registry entry + its yaml,
with no edit here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass(frozen=True)
class ModelSpec:
    name: str
    objectives: tuple[str, ...]  # objectives it can be trained with
    execute: Callable  # (cfg, ctx) -> Outcome: what the run harness calls (dlm_bench/run/harness.py)
    check_config: Optional[Callable] = None  # (cfg) -> None: its own settings, before any data (ConfigError)
    check_data: Optional[Callable] = None  # (cfg, dataset) -> None: after the data are loaded, before training
    own_loop: bool = False  # its own fit loop and data protocol (lgm, sggpm, savigp), not the shared Trainer
    checkpoints: bool = False  # its fit saves a checkpoint a rerun resumes (training/checkpoint.py)
    paper: Optional[str] = None  # the paper key its runs belong to when it belongs to one (run.json `paper`)
    own_objective: Optional[str] = None  # trains its own (approximate) marginal likelihood; run.json's label for it
    collapsed: bool = False  # q(u) in closed form
    gaussian_only: bool = False
    full_batch_only: bool = False
    zero_mean_only: bool = False
    pac_evaluable: bool = False  # KL(Q||P) in closed form: the PAC-Bayes evaluation applies
    trained_on: str = ""  # for messages: "a PAC-Bayes bound"
    label: Optional[Callable] = None  # (cfg) -> the objective label in run names and run.json (default: own_objective)
    config_section: Optional[str] = None  # a top-level config section only this model reads (hashed only for it)
    # (resolved config dict) -> the fit's size (inducing / active-set points) without loading data, and the config
    # keys that set it: an own-loop point is estimated from finished runs at other sizes (sweeps/size_scaling.py)
    fit_size: Optional[Callable] = None
    size_keys: tuple[str, ...] = ()
    description: str = ""
    # (cfg) -> None: settings whose default depends on the dataset's task (model.likelihood, model.mean, the default
    # protocol), filled in place before validation and before the run is named (idempotent); None: its own defaults
    task_defaults: Optional[Callable] = None
    # (cfg) -> None: on the copy a run name is hashed from, `auto` settings resolved as the run resolves them (a
    # fixed-hyperparameter run's stage-1 model), so the name says what runs
    name_defaults: Optional[Callable] = None
    # the batched beta grid (objective.beta_batch) when the family offers it: see BetaGroup
    beta_group: Optional["BetaGroup"] = None


@dataclass(frozen=True)
class BetaGroup:
    """A family's batched beta grid: every beta of one (dataset, split, method, seed) trained in one model, each member
    written by the run harness as the ordinary run (run/batched.py holds the harness's part: locks, which members,
    the data, the records). The family gets the harness's services as a GroupServices and imports nothing above it."""
    requested: Callable  # (cfg) -> bool: this run trains its beta group in one batch
    check: Callable  # (cfg) -> None: ConfigError for settings a batch cannot train (before any folder is made)
    full_batch: Callable  # (cfg, n_train) -> bool: the group batches at this training size (else the point runs alone)
    # (cfg, members [(k, cfg_k, run_dir)], prep, device, dtype, services) -> {k: services.write(...) or
    # services.unbatched(...)}: trains the members and hands each one's Outcome to the harness
    train: Callable


@dataclass(frozen=True)
class GroupServices:
    """What the run harness lends a family's BetaGroup.train (callbacks, so the family does not import run/)."""
    # (cfg_k, run_dir, outcome, threads, error=None) -> (record, run_dir): member k's record built and written
    # (error: an exception of its evaluation, recorded with its traceback as a failed run)
    write: Callable
    unbatched: Callable  # (cfg_k) -> (record, run_dir): member k run as the ordinary, unbatched run
    apply_threads: Callable  # (n, num_inducing, batch_size) -> threads: the harness's thread rule, applied
    group_dir: object  # Path: the group's own directory (its checkpoints go there)


@dataclass(frozen=True)
class ObjectiveSpec:
    name: str
    implementation: object
    select_by: str  # the validation metric a beta grid is selected on (Wei et al. 2021, sec. 6)
    has_beta: bool = True
    fixed_hyperparameters: bool = False  # hyperparameters=fixed (taken from a trained SVGP) is allowed
    models: Optional[tuple[str, ...]] = None  # only these models train it (None: any model that lists it)
    gaussian_only: bool = False
    full_batch_only: bool = False
    zero_mean_only: bool = False
    pac_bound: bool = False  # a PAC-Bayes bound: its runs always get the PAC-Bayes evaluation
    description: str = ""


@dataclass(frozen=True)
class EstimatorSpec:
    name: str
    mlls: dict  # objective -> MLL class that estimates its likelihood term
    sampling: bool = False  # takes estimator.num_samples (>= 1)
    extra_keys: tuple[str, ...] = ()  # further estimator.* keys it reads (others must stay null)
    non_gaussian_only: bool = False
    description: str = field(default="")
