"""Latent Gaussian models with the fixed-point operator (Sheth & Khardon, AISTATS 2016): model (prior and
marginal maps for GLM / full GP / sparse GP), site expectations (E, rho, lambda), VLB and gradients, and the
optimisers GRAD / FPb / FPi / FPi + FP-mean."""

from ..gpmath.kernels import rbf
from ..gpmath.lgm import LGM, Cov, full_gp, glm, sparse_gp
from .optim import OPTIMIZERS, OptResult, StopRule, optimise
from ..gpmath.sites import SITES, make_site

LGM_MODELS = ("lgm_glm", "lgm_gp", "lgm_sparse")

__all__ = ["LGM", "Cov", "glm", "full_gp", "sparse_gp", "rbf", "OPTIMIZERS", "OptResult", "StopRule", "optimise",
           "SITES", "make_site", "LGM_MODELS"]
