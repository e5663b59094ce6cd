"""Model registry: config name (`model.name`) -> builder(cfg, X_train, y_train) -> ModelBundle.

`svgp` covers the SVGP objectives (elbo, dlm with any estimator); with objective=sq_dlm the SVGP
family is represented by its mean only (models/sq_dlm.py), see dlm_bench/methods.py for the dispatch.
`exact_gp` is the full GP (GPyTorch ExactGP, marginal likelihood); `pac_gp` / `pac_sgp` are trained on the
PAC-Bayes bound (objective=pac_kl|pac_sqrt, Reeb et al. 2018).
"""

from .base import ModelBundle
from .exact import ExactGPBundle, build_exact_gp
from .fitc import build_fitc
from .pac_gp import PacGPBundle, PacSGPBundle, build_pac_gp, build_pac_sgp
from .sgpr import CollapsedBundle, build_sgpr
from .sq_dlm import SqDLMBundle, build_sq_dlm
from .svgp import SVGP, SVGPBundle, build_svgp

MODELS = {
    "svgp": build_svgp, "sgpr": build_sgpr, "fitc": build_fitc,
    "exact_gp": build_exact_gp, "pac_gp": build_pac_gp, "pac_sgp": build_pac_sgp,
}

__all__ = [
    "MODELS", "ModelBundle", "SVGP", "SVGPBundle", "CollapsedBundle", "SqDLMBundle",
    "build_svgp", "build_sgpr", "build_fitc", "build_sq_dlm",
    "ExactGPBundle", "PacGPBundle", "PacSGPBundle", "build_exact_gp", "build_pac_gp", "build_pac_sgp",
]
