"""The fixed-hyperparameter
procedure (Wei et al. 2021, sec. 6 and supplement): train the stage-1 model fully (regression: the collapsed
SGPR; otherwise SVGP with the ELBO, beta=1), copy its hyperparameters and Z into the method's bundle, freeze
them, learn the variational part from scratch."""

from __future__ import annotations

import copy
import time

import torch
from omegaconf import DictConfig, open_dict, read_write

from ..config.schema import Hyperparameters
from ..errors import ConfigError
from ..training.trainer import Trainer, TrainResult
from .base import ModelBundle
from .builders import build_bundle


def resolve_pretrain_model(cfg: DictConfig) -> str:
    """objective.pretrain_model with `auto` resolved: the collapsed SGPR where it applies (Gaussian likelihood,
    zero mean: the DLM paper's regression, whose SVGP is the collapsed form; upstream conjugate/script.py
    get_base_model), SVGP + ELBO otherwise (upstream nonconjugate/script.py get_base_model)."""
    name = cfg.objective.get("pretrain_model", "auto")
    if name != "auto":
        return name
    if cfg.model.get("likelihood") is None or getattr(cfg.model.mean, "value", cfg.model.mean) == "auto":
        from .task_defaults import resolve_task_defaults

        cfg = copy.deepcopy(cfg)
        resolve_task_defaults(cfg)
    lik = cfg.model.get("likelihood") or "gaussian"
    mean = getattr(cfg.model.mean, "value", cfg.model.mean)
    return "sgpr" if lik == "gaussian" and mean == "zero" else "svgp"


def resolve_auto_pretrain(cfg: DictConfig) -> None:
    """ModelSpec.name_defaults of the Trainer models: a fixed run's `objective.pretrain_model=auto` resolved in place
    (resolve_pretrain_model), so the run name hashes the stage-1 model that runs."""
    if cfg.objective.hyperparameters is Hyperparameters.fixed and cfg.objective.get("pretrain_model") == "auto":
        cfg.objective.pretrain_model = resolve_pretrain_model(cfg)


def pretrain_config(cfg: DictConfig) -> DictConfig:
    """The stage-1 model whose hyperparameters a fixed run adopts: same model settings, ELBO, beta=1, exact;
    SVGP, or the collapsed SGPR (full batch, trainer.lr) for objective.pretrain_model=sgpr (auto: regression).
    objective.pretrain_beta=same: the beta-ELBO at the run's beta (cfg.objective.beta, resolved from beta_index
    by the caller: models/fit.py execute), i.e. a beta-SVGP stage 1 (Wei et al. 2021, eq. 2 with beta)."""
    pre = copy.deepcopy(cfg)
    kind = resolve_pretrain_model(cfg)
    same = cfg.objective.get("pretrain_beta", "one") == "same"
    if same and kind != "svgp":
        raise ConfigError(f"objective.pretrain_beta=same needs objective.pretrain_model=svgp (got {kind}: the "
                          "collapsed SGPR has no beta)")
    with read_write(pre), open_dict(pre):
        pre.model.name = kind
        pre.objective.name, pre.objective.beta_index = "elbo", None
        pre.objective.beta = float(cfg.objective.beta) if same else 1.0
        pre.objective.hyperparameters = Hyperparameters.joint
        pre.objective.pretrain_model, pre.objective.pretrain_epochs = kind, None
        pre.estimator.name, pre.estimator.num_samples = "exact", None
        if "nu" in pre.estimator:
            pre.estimator.nu = None
        pre.trainer.track_every = None
        if cfg.objective.get("pretrain_epochs") is not None:
            pre.trainer.epochs = cfg.objective.pretrain_epochs
        if kind == "sgpr":  # closed-form q(u): full batch, the batch learning rate
            pre.trainer.batch_size, pre.trainer.epochs, pre.trainer.stochastic_lr = None, None, None
    if kind == "sgpr" and cfg.model.get("likelihood") not in (None, "gaussian"):
        raise ConfigError(f"objective.pretrain_model=sgpr needs a Gaussian likelihood (got {cfg.model.likelihood})")
    return pre


def shared_stage1_key(cfg: DictConfig) -> str | None:
    """The stage-1 store key of a joint run that is itself a stage-1 model, else None.

    The SGPR point of a DLM regression sweep is exactly its fixed runs' stage 1 (Gaussian, zero mean: the
    collapsed SGPR with the ELBO at beta 1, same data, split, seed and trainer). Such a run trains through the
    PretrainStore, so the two train once: on cadata n = 3000 that saves one 1000-1400 s fit a seed. An SVGP + ELBO
    point at beta 1 shares only with the fixed method's trainer settings: the presets give fixed runs minibatches
    of 6000 with Adam 1e-3 and the ELBO point full batch, so beside fixed classification or count runs both
    train (the same fit when N <= 6000; the key does not know N). A run that records test metrics along training
    (trainer.track_every) trains itself: the store keeps the loss curve, not test metrics."""
    from ..training.stage1_store import key_fields, pretrain_key

    if cfg.objective.hyperparameters is Hyperparameters.fixed or cfg.trainer.get("track_every"):
        return None
    try:
        pre = pretrain_config(cfg)
    except ConfigError:  # objective.pretrain_model=sgpr on a non-Gaussian likelihood: no stage 1 to be
        return None
    own = copy.deepcopy(cfg)
    with read_write(own), open_dict(own):  # a joint run never reads these two
        own.objective.pretrain_model = pre.objective.pretrain_model
        own.objective.pretrain_epochs = pre.objective.pretrain_epochs
    return pretrain_key(pre) if key_fields(own) == key_fields(pre) else None


def pretrain_and_freeze(cfg, bundle: ModelBundle, X, y, trainer, device, dtype, store=None):
    """Stage 1 of a fixed run. Returns (TrainResult of the stage-1 model, info dict); the bundle is changed only
    if it is ok. With a `store` (dlm_bench/training/stage1_store.py) the stage-1 state is trained once per key and reused."""
    from ..training.stage1_store import pretrain_key

    pre_cfg = pretrain_config(cfg)
    pre = build_bundle(pre_cfg, X, y).to(device=device, dtype=dtype)
    pre.train()
    pre_trainer = Trainer.from_config(pre_cfg.trainer, seed=cfg.seed)
    if getattr(trainer, "checkpoint", None) is not None:  # stage 1 checkpoints beside stage 2 (checkpoint-stage1.pt)
        pre_trainer.checkpoint = trainer.checkpoint.sibling("stage1")
    rng = torch.random.get_rng_state()  # stage 2 sees the same random state whether stage 1 ran or was loaded

    def fit():
        return pre_trainer.fit(pre.loss, pre.trainable_parameters(), X, y, module=pre)

    info = {"pretrain_model": pre_cfg.model.name, "pretrain_beta": float(pre_cfg.objective.beta)}
    if store is None:
        result, reused = fit(), False
    else:
        key = pretrain_key(pre_cfg)
        result, reused = store.get_or_train(key, pre, fit)
        info["pretrain_key"] = key
    torch.random.set_rng_state(rng)
    info["pretrain_reused"] = reused
    if result.status == "ok":
        bundle.adopt_hyperparameters(pre)
    return result, info


@torch.no_grad()
def evaluate_only(bundle: ModelBundle, X, y) -> TrainResult:
    """A bundle with nothing left to train (fixed sq-DLM): one loss evaluation, recorded as iteration 0."""
    start = time.perf_counter()
    loss = bundle.loss(X, y).item()
    wall = time.perf_counter() - start
    return TrainResult(
        converged=True, wall_s=wall, final_loss=loss, curve=[{"iteration": 0, "wall_s": wall, "loss": loss}]
    )
