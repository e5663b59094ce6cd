"""Model registry: config name (`model.name`) -> builder(cfg, X_train, y_train) -> ModelBundle."""

from .base import ModelBundle
from .svgp import SVGP, SVGPBundle, build_svgp

MODELS = {"svgp": build_svgp}

__all__ = ["MODELS", "ModelBundle", "SVGP", "SVGPBundle", "build_svgp"]
