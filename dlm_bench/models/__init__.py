"""Model registry: config name (`model.name`) -> builder(model_cfg, X_train, seed)."""

from .svgp import SVGP, build_svgp

MODELS = {"svgp": build_svgp}

__all__ = ["MODELS", "SVGP", "build_svgp"]
