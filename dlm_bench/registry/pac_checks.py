"""The PAC-Bayes evaluation's own settings (Reeb et al. 2018): the validation pipeline (registry/validation.py) runs
this check for every configuration, before any data is loaded. It lives here, not in pac/, because objectives/ imports
pac/ (the bounds) and this check reads objectives.pac_evaluation."""

from __future__ import annotations

import math

from omegaconf import DictConfig

from ..errors import ConfigError
from ..objectives import pac_evaluation  # objectives imports pac (the bounds): this check lives above both


def check_pac_settings(cfg: DictConfig) -> None:
    if cfg.pac.sparse_q.value != "fitc" and cfg.model.name != "pac_sgp":
        raise ConfigError(f"pac.sparse_q applies to model=pac_sgp (got model={cfg.model.name})")
    if not pac_evaluation(cfg):
        return
    if cfg.model.kernel.value != "rbf":
        raise ConfigError("the PAC-Bayes evaluation: the hyperparameter grid is defined for the SE kernel; use model.kernel=rbf")
    p = cfg.pac
    if not (p.epsilon is not None and math.isfinite(p.epsilon) and p.epsilon > 0):
        raise ConfigError(f"pac.epsilon must be a finite number > 0, got {p.epsilon}")
    if not (p.delta is not None and 0 < p.delta <= 1):
        raise ConfigError(f"pac.delta must be in (0, 1], got {p.delta}")
    if not (p.grid_L is not None and math.isfinite(p.grid_L) and p.grid_L > 0 and p.grid_G >= 1):
        raise ConfigError(f"pac.grid_L must be a finite number > 0 and pac.grid_G >= 1, got {p.grid_L}, {p.grid_G}")
    if p.round_digits is not None and not 0 <= p.round_digits <= 8:
        raise ConfigError(f"pac.round_digits must be in 0..8 or null, got {p.round_digits}")
