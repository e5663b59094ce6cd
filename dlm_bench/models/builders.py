"""The GPyTorch models the shared Trainer fits: config name (`model.name`) -> builder(cfg, X_train, y_train) ->
ModelBundle. objective=sq_dlm represents the SVGP family by its mean only (sq_dlm.py), whatever the model.

The registry (dlm_bench/registry.py) declares what each model combines with; this table is what builds it, so the
fixed-hyperparameter stage 1 (fixed.py) can build its SGPR / SVGP without reaching up to the registry."""

from __future__ import annotations

import torch
from omegaconf import DictConfig

from .base import ModelBundle
from .exact import build_exact_gp
from .fitc import build_fitc
from .pac_gp import build_pac_gp, build_pac_sgp
from .sgpr import build_sgpr
from .sq_dlm import build_sq_dlm
from .svgp import build_svgp

BUILDERS = {"svgp": build_svgp, "sgpr": build_sgpr, "fitc": build_fitc, "exact_gp": build_exact_gp,
            "pac_gp": build_pac_gp, "pac_sgp": build_pac_sgp}


def build_bundle(cfg: DictConfig, X_train: torch.Tensor, y_train: torch.Tensor) -> ModelBundle:
    if cfg.objective.name == "sq_dlm":
        return build_sq_dlm(cfg, X_train, y_train)
    return BUILDERS[cfg.model.name](cfg, X_train, y_train)
