"""Which bundle a configuration trains, which combinations make sense, and the fixed-hyperparameter
procedure (Wei et al. 2021, sec. 6 and supplement): train SVGP fully (ELBO, beta=1), copy its
hyperparameters and Z into the method's bundle, freeze them, learn the variational part from scratch."""

from __future__ import annotations

import copy
import time

import torch
from omegaconf import DictConfig, read_write

from .compatibility import check_combination, objective_label, pac_evaluation  # noqa: F401 (objective_label re-exported)
from .config import Hyperparameters
from .errors import ConfigError
from .models import MODELS, ModelBundle, build_sq_dlm
from .train import TrainResult


def check_method(cfg: DictConfig) -> None:
    """Declared combination rules (capabilities.py), then the settings of the PAC-Bayes evaluation."""
    check_combination(cfg)
    check_pac_settings(cfg)


def check_pac_settings(cfg: DictConfig) -> None:
    """The PAC-Bayes bound's own settings (Reeb et al. 2018), checked when a run is evaluated on it."""
    if cfg.pac.sparse_q.value != "fitc" and cfg.model.name != "pac_sgp":
        raise ConfigError(f"pac.sparse_q applies to model=pac_sgp (got model={cfg.model.name})")
    if not pac_evaluation(cfg):
        return
    if cfg.model.kernel.value != "rbf":
        raise ConfigError("paper=pac: the hyperparameter grid is defined for the SE kernel; use model.kernel=rbf")
    p = cfg.pac
    if not p.epsilon > 0:
        raise ConfigError(f"pac.epsilon must be > 0, got {p.epsilon}")
    if not 0 < p.delta <= 1:
        raise ConfigError(f"pac.delta must be in (0, 1], got {p.delta}")
    if not (p.grid_L > 0 and p.grid_G >= 1):
        raise ConfigError(f"pac.grid_L must be > 0 and pac.grid_G >= 1, got {p.grid_L}, {p.grid_G}")
    if p.round_digits is not None and not 0 <= p.round_digits <= 8:
        raise ConfigError(f"pac.round_digits must be in 0..8 or null, got {p.round_digits}")


def build_bundle(cfg: DictConfig, X_train: torch.Tensor, y_train: torch.Tensor) -> ModelBundle:
    if cfg.objective.name == "sq_dlm":
        return build_sq_dlm(cfg, X_train, y_train)
    return MODELS[cfg.model.name].build(cfg, X_train, y_train)


def pretrain_config(cfg: DictConfig) -> DictConfig:
    """The SVGP whose hyperparameters a fixed run adopts: same model settings, ELBO, beta=1, exact."""
    pre = copy.deepcopy(cfg)
    with read_write(pre):
        pre.model.name = "svgp"
        pre.objective.name, pre.objective.beta = "elbo", 1.0
        pre.objective.hyperparameters = Hyperparameters.joint
        pre.estimator.name, pre.estimator.num_samples = "exact", None
    return pre


def pretrain_and_freeze(cfg, bundle: ModelBundle, X, y, trainer, device, dtype) -> TrainResult:
    """Stage 1 of a fixed run. Returns the SVGP's TrainResult; the bundle is changed only if it is ok."""
    pre = build_bundle(pretrain_config(cfg), X, y).to(device=device, dtype=dtype)
    pre.train()
    result = trainer.fit(pre.loss, pre.trainable_parameters(), X, y)
    if result.status == "ok":
        bundle.adopt_hyperparameters(pre)
    return result


@torch.no_grad()
def evaluate_only(bundle: ModelBundle, X, y) -> TrainResult:
    """A bundle with nothing left to train (fixed sq-DLM): one loss evaluation, recorded as iteration 0."""
    start = time.perf_counter()
    loss = bundle.loss(X, y).item()
    wall = time.perf_counter() - start
    return TrainResult(
        converged=True, wall_s=wall, final_loss=loss, curve=[{"iteration": 0, "wall_s": wall, "loss": loss}]
    )
