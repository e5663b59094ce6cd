"""One run: data -> model -> fit -> evaluate -> RunRecord (run.json + curve.csv)."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from . import batched, data, methods
from .compatibility import check_combination, objective_label, pac_evaluation, unused_sections
from .beta import OutsideBetaGrid, apply_beta_grid_flag, resolve_beta
from .config import Hyperparameters
from .errors import ConfigError
from .estimators import effective_estimator
from .evaluation import predictive_metrics
from .task_defaults import resolve_task_defaults
from .threads import apply_threads
from .pac.evaluation import pac_metrics, write_predictive_1d
from .models import MODELS
from .pretrain import PretrainStore
from .results import RunRecord, env_info, write_curve_csv, write_run_json
from .train import TrainResult, Trainer
from .validation import check_writable, validate


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device=cuda but torch sees no CUDA device (use device=auto or device=cpu)")
    return torch.device(name)


def config_dict(cfg: DictConfig) -> dict:
    return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)


# Settings that say where or how to run, not what: they do not change a run's name.
NOT_IN_RUN_NAME = ("results_dir", "run_dir", "launcher", "resume", "report")
# (group, key) -> values that mean "as before the key existed": omitted from the run-name hash
ADDED_LATER = {
    ("model", "likelihood"): (None, "gaussian"),
    ("estimator", "nu"): (None,),
    ("objective", "beta_grid"): (True,),
    ("trainer", "track_every"): (None,),
    ("trainer", "tol_on"): ("mean",),
    ("trainer", "stochastic_lr"): (None,),
    # fixed runs: the stage-1 model (resolved from auto below); joint runs drop both keys
    ("objective", "pretrain_model"): ("svgp",),
    ("objective", "pretrain_epochs"): (None,),
    ("sggpm", "learn_hyperparameters"): (False,),
}
# keys removed from the config after results were written: hashed at their last value, so names stay valid
REMOVED_LATER = {
    ("protocol", "folds"): 5,  # the preliminary `sggpm` protocol (superseded by dlm_bench/sggpm/protocol.py)
    ("protocol", "fold"): None,
    ("protocol", "active_size"): None,
}


def run_name(cfg: DictConfig, resolve: bool = True) -> str:
    """Deterministic: readable key fields + a hash of everything that can change the result. Works on a copy
    (task defaults resolved there), so the caller's config is unchanged; an unknown dataset or likelihood raises
    (resolve=False names a configuration that cannot be resolved, for its failure record)."""
    cfg = copy.deepcopy(cfg)
    spec = MODELS.get(cfg.model.name)
    if resolve and not (spec is not None and spec.execute is not None):  # models with their own loop: own defaults
        resolve_task_defaults(cfg)
    if cfg.objective.hyperparameters is Hyperparameters.fixed and cfg.objective.get("pretrain_model") == "auto":
        cfg.objective.pretrain_model = methods.resolve_pretrain_model(cfg)
    d = config_dict(cfg)
    if cfg.objective.hyperparameters is not Hyperparameters.fixed:  # no stage 1: its settings change nothing
        for key in ("pretrain_model", "pretrain_epochs"):
            d["objective"].pop(key, None)
    # keys added after the first results were written are left out at their old implicit values, so
    # existing run names (and sweep resumption) stay valid
    for (group, key), implicit in ADDED_LATER.items():
        if d.get(group, {}).get(key, implicit[0]) in implicit:
            d.get(group, {}).pop(key, None)
    for (group, key), last in REMOVED_LATER.items():
        if group in d:
            d[group][key] = last
    for k in NOT_IN_RUN_NAME:
        d.pop(k, None)
    d.get("trainer", {}).pop("progress", None)
    d.get("objective", {}).pop("beta_batch", None)  # how, not what: batched and unbatched runs share names
    d.pop("eval", None)  # what is evaluated shows in whether the pac settings are hashed
    if not pac_evaluation(cfg):
        d.pop("pac", None)  # PAC settings change nothing else: keep other papers' run names as they were
    for section in unused_sections(cfg):
        d.pop(section, None)  # likewise a model's own settings (lgm.*) for every other model
    if d["objective"].get("beta_index") is not None:
        d["objective"].pop("beta", None)  # beta is derived from the index
    if d.get("dataset", {}).get("name") == "csv":  # the user's file: an edited file is a new run
        d["dataset"]["sha256"] = data.user_file_sha256(d["dataset"].get("path"))
    digest = hashlib.sha1(json.dumps(d, sort_keys=True).encode()).hexdigest()[:8]
    k = cfg.objective.beta_index
    beta = f"beta{cfg.objective.beta:g}" if k is None else f"betaidx{k}"
    name = f"{cfg.dataset.name}_{cfg.model.name}_{objective_label(cfg)}_{beta}_seed{cfg.seed}_{digest}"
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", name)


def run_dir_for(cfg: DictConfig, resolve: bool = True) -> Path:
    if cfg.run_dir:
        return Path(cfg.run_dir)
    return Path(cfg.results_dir) / cfg.experiment / run_name(cfg, resolve)


@dataclass
class Prepared:
    dataset: data.Dataset
    split: data.Split
    tensors: dict  # name -> (X, y) torch tensors in normalised units


def prepare_data(cfg: DictConfig, device: torch.device, dtype: torch.dtype) -> Prepared:
    ds = data.load_from_config(cfg.dataset)
    split = data.make_split(cfg.protocol, ds, cfg.seed)
    tensors = {}
    for part in ("train", "val", "test"):
        idx = getattr(split, part)
        X = split.x_stats.transform(ds.X[idx])
        y = split.y_stats.transform(ds.y[idx])
        tensors[part] = (
            torch.as_tensor(X, dtype=dtype, device=device),
            torch.as_tensor(y, dtype=dtype, device=device),
        )
    return Prepared(ds, split, tensors)


def _job_overrides() -> list[str]:
    """The overrides of the Hydra job this process runs (a sweep's grid point), or none outside a job."""
    try:
        from hydra.core.hydra_config import HydraConfig

        return list(HydraConfig.get().overrides.task)
    except Exception:  # not inside a Hydra job (dlm-bench run composes and checks its own overrides)
        return []


def check_config(cfg: DictConfig) -> None:
    validate(cfg, _job_overrides())
    methods.check_method(cfg)
    if cfg.model.noise_init <= 1e-4:
        raise ConfigError(f"model.noise_init must be > 1e-4 (the noise constraint), got {cfg.model.noise_init}")


def tracking(cfg: DictConfig, bundle, prep: Prepared) -> dict:
    """Trainer.fit arguments that record test metrics along training (trainer.track_every)."""
    k = cfg.trainer.track_every
    if not k:
        return {}
    if k < 1:
        raise ConfigError(f"trainer.track_every must be >= 1 or null, got {k}")
    X, y = prep.tensors["test"]
    y_scale = float(np.asarray(prep.split.y_stats.std).reshape(-1)[0])

    def track() -> dict:
        metrics = predictive_metrics(bundle, X, y, y_scale, "test")
        bundle.train()
        return {m: v for m, v in metrics.items() if not m.endswith("_raw")}

    return {"track": track, "track_every": k}


def new_record(cfg: DictConfig, prep: Prepared, bundle) -> RunRecord:
    """The run.json record of a Trainer run before training (status ok until the fit says otherwise); the one
    constructor for runner.execute and the batched beta grid (dlm_bench/batched.py)."""
    return RunRecord(
        status="ok",
        error=None,
        paper=cfg.paper,
        experiment=cfg.experiment,
        dataset=prep.dataset.name,
        task=prep.dataset.task,
        model=cfg.model.name,
        objective=objective_label(cfg),
        estimator=effective_estimator(cfg.objective.name, cfg.estimator.name, cfg.model.get("likelihood")),
        likelihood=bundle.likelihood_name,
        beta=float(cfg.objective.beta),
        seed=int(cfg.seed),
        split=cfg.protocol.name,
        train_size=int(prep.tensors["train"][0].shape[0]),
        num_inducing=bundle.num_inducing,
        hyperparameters=cfg.objective.hyperparameters.value,
        config=config_dict(cfg),
        env=env_info(),
    )


def train_record(cfg: DictConfig, result: TrainResult, device, pretrain=None, pretrain_info=None,
                 total_wall_s: float | None = None) -> dict:
    """run.json's `train` of a Trainer run; for fixed runs the keys describe stage 2, plus the stage-1 model's."""
    train = {
        "iterations": result.iterations,
        "epochs": result.epochs,
        "converged": result.converged,
        "wall_s": result.wall_s,
        "final_loss": result.final_loss,
        "device": str(device),
        "dtype": cfg.dtype.value,
        "tol_on": cfg.trainer.tol_on,
    }
    if pretrain is not None:
        train.update(
            **(pretrain_info or {}),
            total_wall_s=total_wall_s,  # both stages as spent by this run (a reused stage 1 costs its loading only)
            pretrain_iterations=pretrain.iterations,
            pretrain_converged=pretrain.converged,
            pretrain_wall_s=pretrain.wall_s,
            pretrain_final_loss=pretrain.final_loss,
        )
    return train


def failure_record(cfg: DictConfig, err: BaseException) -> tuple[RunRecord, Path]:
    """Record a run that could not start (bad data/config for this grid point) as failed."""
    try:
        run_dir = run_dir_for(cfg)
    except (ConfigError, data.DatasetError):  # its task defaults cannot be resolved: name it as composed
        run_dir = run_dir_for(cfg, resolve=False)
    record = RunRecord(
        status="failed",
        error=f"{type(err).__name__}: {err}",
        paper=cfg.paper,
        experiment=cfg.experiment,
        dataset=cfg.dataset.name,
        task=None,
        model=cfg.model.name,
        objective=objective_label(cfg),
        estimator=cfg.estimator.name,
        likelihood=None,
        beta=float(cfg.objective.beta),
        seed=int(cfg.seed),
        split=cfg.protocol.name,
        train_size=cfg.protocol.train_size,
        num_inducing=None,
        hyperparameters=cfg.objective.hyperparameters.value,
        config=config_dict(cfg),
        env=env_info(),
        train={"iterations": 0, "epochs": 0, "converged": False, "wall_s": 0.0, "final_loss": None,
               "device": None, "dtype": cfg.dtype.value},
    )
    write_curve_csv(run_dir, [])
    write_run_json(run_dir, record)
    return record, run_dir


def execute(cfg: DictConfig) -> tuple[RunRecord, Path]:
    """Run one configuration and write its run directory. Never raises for a failure inside the run:
    the record says `failed` (with the error) or `diverged`; config and data errors do raise."""
    spec = MODELS.get(cfg.model.name)
    if spec is not None and spec.execute is not None:  # a model with its own fit loop (the LGM optimisers)
        validate(cfg, _job_overrides())
        check_combination(cfg)
        check_writable(run_dir_for(cfg).parent)
        return spec.execute(cfg)
    apply_beta_grid_flag(cfg.objective)
    if batched.requested(cfg):  # objective.beta_batch: the whole beta group in one model (dlm_bench/batched.py)
        return batched.execute_batched(cfg)
    resolve_task_defaults(cfg)
    check_config(cfg)
    check_writable(run_dir_for(cfg).parent)  # before any training: results that cannot be written are lost
    device = resolve_device(cfg.device.value)
    dtype = {"float32": torch.float32, "float64": torch.float64}[cfg.dtype.value]
    seed_everything(cfg.seed)
    prep = prepare_data(cfg, device, dtype)
    X_train, y_train = prep.tensors["train"]
    n_train = X_train.shape[0]
    beta = resolve_beta(cfg.objective, n_train)  # OutsideBetaGrid is a ValueError: the CLI prints one line
    cfg.objective.beta = beta

    bundle = methods.build_bundle(cfg, X_train, y_train).to(device=device, dtype=dtype)
    apply_threads(n_train, bundle.num_inducing, cfg.trainer.batch_size)  # dlm_bench/threads.py
    fixed = cfg.objective.hyperparameters is Hyperparameters.fixed
    trainer = Trainer.from_config(cfg.trainer, seed=cfg.seed)

    run_dir = run_dir_for(cfg)
    record = new_record(cfg, prep, bundle)
    result, pretrain, pretrain_info = TrainResult(), None, {}
    start = trained_at = time.perf_counter()
    try:
        if fixed:  # stage 1 (regression: collapsed SGPR; else SVGP + ELBO), trained once per key; copied and frozen
            store = PretrainStore(cfg.results_dir)
            pretrain, pretrain_info = methods.pretrain_and_freeze(cfg, bundle, X_train, y_train, trainer, device,
                                                                  dtype, store=store)
            if pretrain.status != "ok":
                result = TrainResult(status=pretrain.status,
                                     error=f"{pretrain_info['pretrain_model'].upper()} pretraining: {pretrain.error}")
        if result.status == "ok":
            bundle.train()
            params = bundle.trainable_parameters()
            if params:
                result = trainer.fit(bundle.loss, params, X_train, y_train, **tracking(cfg, bundle, prep))
            else:
                result = methods.evaluate_only(bundle, X_train, y_train)
        trained_at = time.perf_counter()
        record.status, record.error = result.status, result.error
        if result.status == "ok":
            y_scale = float(np.asarray(prep.split.y_stats.std).reshape(-1)[0])
            metrics = {}
            if pac_evaluation(cfg):
                # rounds theta to the grid first, so every metric below uses the rounded prior
                metrics.update(pac_metrics(bundle, cfg.pac, *prep.tensors["train"], *prep.tensors["test"]))
                write_predictive_1d(bundle, run_dir, *prep.tensors["train"], cfg.pac)  # 1-D inputs only (Fig. 1)
            for part in ("val", "test"):
                metrics.update(predictive_metrics(bundle, *prep.tensors[part], y_scale, part))
            if bundle.noise is not None:  # sq-DLM has no likelihood, hence no noise
                metrics["noise_var"] = bundle.noise.item()
            record.metrics = metrics
            if not all(np.isfinite(v) for v in metrics.values()):
                record.status, record.error = "diverged", "non-finite evaluation metric"
    except Exception as err:  # recorded, so a sweep keeps going; the CLI reports it
        record.status = "failed"
        record.error = f"{type(err).__name__}: {err}"
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "traceback.txt").write_text(traceback.format_exc())
    record.train = train_record(cfg, result, device, pretrain, pretrain_info, max(trained_at - start, result.wall_s))
    write_curve_csv(run_dir, result.curve)
    write_run_json(run_dir, record)
    return record, run_dir
