"""The GPyTorch models the shared Trainer fits: config name (`model.name`) -> builder(cfg, X_train, y_train) ->
ModelBundle. objective=sq_dlm represents the SVGP family by its mean only (sq_dlm.py), whatever the model.

The registry (dlm_bench/registry.py) declares what each model combines with; this table is what builds it, so the
fixed-hyperparameter stage 1 (fixed.py) can build its SGPR / SVGP without reaching up to the registry."""

from __future__ import annotations

from contextlib import contextmanager

import torch
from omegaconf import DictConfig

from .base import ModelBundle
from .exact import build_exact_gp
from .pac_gp import build_pac_gp, build_pac_sgp
from .sgpr import build_fitc, build_sgpr
from .sq_dlm import build_sq_dlm
from .svgp import build_svgp

BUILDERS = {"svgp": build_svgp, "sgpr": build_sgpr, "fitc": build_fitc, "exact_gp": build_exact_gp,
            "pac_gp": build_pac_gp, "pac_sgp": build_pac_sgp}


@contextmanager
def parameters_in(dtype: torch.dtype):
    """New parameters are created in `dtype`: GPyTorch turns `noise = 0.1` into its raw parameter in the parameter's
    own dtype, so a float32 parameter converted by `.double()` afterwards starts at 0.0999999954, not 0.1."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def build_bundle(cfg: DictConfig, X_train: torch.Tensor, y_train: torch.Tensor) -> ModelBundle:
    """The configured model, its parameters built in the training data's dtype (a float64 run starts exactly at
    its configured values)."""
    with parameters_in(X_train.dtype if X_train.is_floating_point() else torch.get_default_dtype()):
        if cfg.objective.name == "sq_dlm":
            return build_sq_dlm(cfg, X_train, y_train)
        return BUILDERS[cfg.model.name](cfg, X_train, y_train)
