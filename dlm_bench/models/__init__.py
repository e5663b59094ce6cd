"""The GPyTorch models fitted by the shared Trainer (svgp, sgpr, fitc, exact_gp, pac_gp, pac_sgp) and what they share:
components.py (kernel, Z, likelihood), base.py (ModelBundle), fixed.py (the fixed-hyperparameter stage 1) and
fit.py (what the run harness calls for all of them). What each model combines with is declared in
dlm_bench/registry.py.
"""

from .base import ModelBundle
from .builders import BUILDERS, build_bundle
from .exact import ExactGPBundle, build_exact_gp
from .fitc import build_fitc
from .pac_gp import PacGPBundle, PacSGPBundle, build_pac_gp, build_pac_sgp
from .sgpr import CollapsedBundle, build_sgpr
from .sq_dlm import SqDLMBundle, build_sq_dlm
from .svgp import SVGP, SVGPBundle, build_svgp

__all__ = [
    "BUILDERS", "build_bundle", "ModelBundle", "SVGP", "SVGPBundle", "CollapsedBundle", "SqDLMBundle",
    "build_svgp", "build_sgpr", "build_fitc", "build_sq_dlm",
    "ExactGPBundle", "PacGPBundle", "PacSGPBundle", "build_exact_gp", "build_pac_gp", "build_pac_sgp",
]
