"""Model registry: config name (`model.name`) -> builder(cfg, X_train, y_train) -> ModelBundle.

`svgp` covers the SVGP objectives (elbo, dlm with any estimator); with objective=sq_dlm the SVGP
family is represented by its mean only (models/sq_dlm.py), see dlm_bench/methods.py for the dispatch.
"""

from .base import ModelBundle
from .fitc import build_fitc
from .sgpr import CollapsedBundle, build_sgpr
from .sq_dlm import SqDLMBundle, build_sq_dlm
from .svgp import SVGP, SVGPBundle, build_svgp

MODELS = {"svgp": build_svgp, "sgpr": build_sgpr, "fitc": build_fitc}

__all__ = [
    "MODELS", "ModelBundle", "SVGP", "SVGPBundle", "CollapsedBundle", "SqDLMBundle",
    "build_svgp", "build_sgpr", "build_fitc", "build_sq_dlm",
]
