"""What the run harness calls for every GPyTorch model the shared Trainer fits (svgp, sgpr, fitc, exact_gp,
pac_gp, pac_sgp): protocol split -> beta -> bundle -> [stage 1 of a fixed run] -> Trainer -> val/test metrics
(+ the PAC-Bayes evaluation when asked for). `evaluate` is also the batched beta grid's (run/batched.py) per-member
evaluation, so a batched member's metrics come from the same code as an unbatched run's."""

from __future__ import annotations

import numpy as np
from omegaconf import DictConfig

from ..config.beta_grid import resolve_beta
from ..config.schema import GPYTORCH_NOISE_FLOOR, Hyperparameters
from ..errors import ConfigError
from ..estimators import effective_estimator
from ..objectives import pac_evaluation
from ..pac.evaluation import pac_metrics, write_predictive_1d
from ..results.outcome import Outcome
from ..training.checkpoint import CHECKPOINT
from ..training.stage1_store import PretrainStore
from ..training.trainer import Trainer, TrainResult
from .bounds import at_bound_text, parameters_at_bounds
from .builders import build_bundle
from .fixed import evaluate_only, pretrain_and_freeze, shared_stage1_key
from .predictive_metrics import predictive_metrics


def check_config(cfg: DictConfig) -> None:
    """The Trainer models' own settings (the validation pipeline's family step)."""
    floor = cfg.model.get("noise_floor", GPYTORCH_NOISE_FLOOR)
    if cfg.model.noise_init <= floor:
        raise ConfigError(f"model.noise_init must be > model.noise_floor ({floor:g}), got {cfg.model.noise_init}")


# Trainer models without inducing inputs: model.num_inducing is not read
NO_INDUCING = ("exact_gp", "pac_gp")
# protocols whose split reads protocol.test_size (a cap on the test part)
TEST_SIZE_PROTOCOLS = ("dlm_regression", "dlm_classification")


def check_data(cfg: DictConfig, dataset) -> None:
    """The Trainer models' data-dependent checks, right after loading (before any training): protocol.test_size
    larger than the dataset, and model.num_inducing larger than the training part the protocol gives (refused:
    initial_inducing_points would otherwise cut M to n without a word)."""
    from ..data.protocols import make_split

    n = len(dataset.y)
    p = cfg.protocol
    from .task_defaults import protocol_file

    preset_cap = p.test_size == protocol_file(p.name).get("test_size")  # the preset's "up to 1000", not asked for
    if p.name in TEST_SIZE_PROTOCOLS and p.test_size is not None and p.test_size > n and not preset_cap:
        raise ConfigError(f"protocol.test_size={p.test_size} is larger than dataset {dataset.name!r} ({n} rows); "
                          f"leave it null or set at most {n} (it caps the test part)")
    if cfg.model.name in NO_INDUCING:
        return
    n_train = len(make_split(p, dataset, cfg.seed).train)
    m = cfg.model.num_inducing
    if m > n_train:
        raise ConfigError(f"model.num_inducing={m} is larger than the training part ({n_train} rows of dataset "
                          f"{dataset.name!r} under protocol={p.name}); set model.num_inducing <= {n_train}")


def describe(cfg: DictConfig, out: Outcome, prep, bundle) -> None:
    """The record fields a Trainer run knows once its bundle is built (shared with the batched grid's members)."""
    out.task, out.likelihood = prep.dataset.task, bundle.likelihood_name
    out.estimator = effective_estimator(cfg.objective.name, cfg.estimator.name, cfg.model.get("likelihood"))
    out.train_size, out.num_inducing = int(prep.tensors["train"][0].shape[0]), bundle.num_inducing


def tracking(cfg: DictConfig, bundle, prep) -> dict:
    """Trainer.fit arguments that record val and test metrics along training (trainer.track_every). The val
    metrics let a stopping rule be replayed on the curve afterwards (Adam full batch is deterministic, so the
    state at iteration k of a long run is the state an earlier stop at k would have kept) and the validation
    selection redone there."""
    k = cfg.trainer.track_every
    if not k:
        return {}
    if k < 1:
        raise ConfigError(f"trainer.track_every must be >= 1 or null, got {k}")
    y_scale = float(np.asarray(prep.split.y_stats.std).reshape(-1)[0])

    def track() -> dict:
        metrics = {}
        for part in ("val", "test"):  # predictive_metrics gives {} for an empty val part
            metrics.update(predictive_metrics(bundle, *prep.tensors[part], y_scale, part))
        bundle.train()
        return {m: v for m, v in metrics.items() if not m.endswith("_raw")}

    return {"track": track, "track_every": k}


def stop_reason(cfg: DictConfig, result: TrainResult) -> str:
    """Why training ended: `converged` (the stopping rule), `iteration_cap` (trainer.max_iters reached first) or
    `epoch_limit` (trainer.epochs, minibatch mode)."""
    if result.converged:
        return "converged"
    return "iteration_cap" if result.iterations >= cfg.trainer.max_iters else "epoch_limit"


def add_stop_and_bounds(cfg: DictConfig, out: Outcome, result: TrainResult, bundle) -> None:
    """out.train's `stopped` (stop_reason) and `at_bound` (models/bounds.py) of a run that trained."""
    if result.status == "ok" and result.iterations:
        out.train["stopped"] = stop_reason(cfg, result)
        bound = at_bound_text(parameters_at_bounds(bundle))
        if bound:
            out.train["at_bound"] = bound


def train_section(cfg: DictConfig, result: TrainResult, pretrain=None, pretrain_info=None,
                  total_wall_s: float | None = None, shared: dict | None = None) -> dict:
    """run.json's `train` of a Trainer run; for fixed runs the keys describe stage 2, plus the stage-1 model's.
    `shared`: a run that is itself a stage-1 model (stage1_key, stage1_reused: its fit loaded from the store)."""
    train = {"iterations": result.iterations, "epochs": result.epochs, "converged": result.converged,
             "wall_s": result.wall_s, "final_loss": result.final_loss, "tol_on": cfg.trainer.tol_on,
             **(shared or {})}
    if result.resumed_at:  # resumed from a checkpoint (training/checkpoint.py) at these iterations
        train["resumed_at"] = list(result.resumed_at)
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


def evaluate(cfg: DictConfig, bundle, prep, out: Outcome) -> None:
    """val/test metrics (and the PAC-Bayes ones when asked for) into out.metrics; diverged if any is not finite."""
    y_scale = float(np.asarray(prep.split.y_stats.std).reshape(-1)[0])
    metrics = {}
    if pac_evaluation(cfg):
        # rounds theta to the grid first, so every metric below uses the rounded prior
        metrics.update(pac_metrics(bundle, cfg.pac, *prep.tensors["train"], *prep.tensors["test"]))
        X, y = prep.tensors["train"]  # predictive.json, 1-D inputs only (Fig. 1); the harness writes it next
        out.artifacts.append(lambda run_dir: write_predictive_1d(bundle, run_dir, X, y, cfg.pac))
    for part in ("val", "test"):
        metrics.update(predictive_metrics(bundle, *prep.tensors[part], y_scale, part))
    if bundle.noise is not None:  # sq-DLM has no likelihood, hence no noise
        metrics["noise_var"] = bundle.noise.item()
    out.metrics = metrics
    if not all(np.isfinite(v) for v in metrics.values()):
        out.status, out.error = "diverged", "non-finite evaluation metric"


def execute(cfg: DictConfig, ctx) -> Outcome:
    """One Trainer run (ctx: the harness's RunContext, seeded, device and dtype chosen); fills ctx.outcome."""
    out = ctx.outcome
    prep = ctx.split()
    X_train, y_train = prep.tensors["train"]
    n_train = X_train.shape[0]
    cfg.objective.beta = resolve_beta(cfg.objective, n_train)  # OutsideBetaGrid is a ValueError: one line
    bundle = build_bundle(cfg, X_train, y_train).to(device=ctx.device, dtype=ctx.dtype)
    describe(cfg, out, prep, bundle)
    ctx.apply_threads(n_train, bundle.num_inducing, cfg.trainer.batch_size)
    fixed = cfg.objective.hyperparameters is Hyperparameters.fixed
    trainer = Trainer.from_config(cfg.trainer, seed=cfg.seed).checkpoint_to(ctx.run_dir / CHECKPOINT,
                                                                                  ctx.checkpoint_identity)
    result, pretrain, pretrain_info, trained_wall = TrainResult(), None, {}, None
    stage1_key, shared = (None if fixed else shared_stage1_key(cfg)), None
    ctx.begin_training()
    try:
        if fixed:  # stage 1 (regression: collapsed SGPR; else SVGP + ELBO), trained once per key; copied and frozen
            pretrain, pretrain_info = pretrain_and_freeze(cfg, bundle, X_train, y_train, trainer, ctx.device,
                                                          ctx.dtype, store=PretrainStore(cfg.results_dir))
            if pretrain.status != "ok":
                result = TrainResult(status=pretrain.status,
                                     error=f"{pretrain_info['pretrain_model'].upper()} pretraining: {pretrain.error}")
        if result.status == "ok":
            bundle.train()
            params = bundle.trainable_parameters()
            if params and stage1_key:  # this run is its fixed runs' stage 1: trained once for both
                result, reused = PretrainStore(cfg.results_dir).get_or_train(
                    stage1_key, bundle, lambda: trainer.fit(bundle.loss, params, X_train, y_train, module=bundle))
                shared = {"stage1_key": stage1_key, "stage1_reused": reused}
            elif params:
                result = trainer.fit(bundle.loss, params, X_train, y_train, module=bundle,
                                     **tracking(cfg, bundle, prep))
            else:
                result = evaluate_only(bundle, X_train, y_train)
        trained_wall = ctx.training_wall()
        out.status, out.error = result.status, result.error
        if result.status == "ok":
            evaluate(cfg, bundle, prep, out)
    finally:  # also for a failure part-way: the record says how far training got
        wall = ctx.training_wall() if trained_wall is None else trained_wall
        out.train = train_section(cfg, result, pretrain, pretrain_info, max(wall, result.wall_s), shared)
        add_stop_and_bounds(cfg, out, result, bundle)
        fallbacks = getattr(getattr(bundle, "mll", None), "fallbacks", None)
        if fallbacks is not None:  # uPS: (sample, example) pairs drawn by the exact inverse-CDF fallback
            out.train["ups_fallbacks"] = int(fallbacks)
        out.curve = result.curve
    return out
