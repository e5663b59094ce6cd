"""The PAC-Bayes evaluation's own settings (Reeb et al. 2018): the validation pipeline (registry/validation.py) runs
this check for every configuration, before any data is loaded. It lives here, not in pac/, because objectives/ imports
pac/ (the bounds) and this check reads objectives.pac_evaluation."""

from __future__ import annotations

from omegaconf import DictConfig

from ..config.schema import check_domains
from ..errors import ConfigError
from ..objectives import pac_evaluation  # objectives imports pac (the bounds): this check lives above both


def check_pac_settings(cfg: DictConfig) -> None:
    if cfg.pac.sparse_q.value != "fitc" and cfg.model.name != "pac_sgp":
        raise ConfigError(f"pac.sparse_q applies to model=pac_sgp (got model={cfg.model.name})")
    if not pac_evaluation(cfg):
        return
    if cfg.model.kernel.value != "rbf":
        raise ConfigError("the PAC-Bayes evaluation: the hyperparameter grid is defined for the SE kernel; use model.kernel=rbf")
    check_domains(cfg, ("pac",))  # epsilon, delta, grid_L, grid_G, round_digits: ranges declared with PacConfig
