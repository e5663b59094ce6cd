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

from ..capabilities import ModelSpec
from ..lgm.run import execute_lgm


def execute_savigp(cfg):
    from ..savigp.run import execute_savigp as run  # savigp builds on models.components: imported when used

    return run(cfg)


def execute_sggpm(cfg):
    from ..sggpm.run import execute_sggpm as run

    return run(cfg)


_PAC = ("pac_kl", "pac_sqrt")
MODELS = {s.name: s for s in (
    ModelSpec("svgp", ("elbo", "dlm", "sq_dlm"), build=build_svgp,
              description="sparse variational GP (Hensman et al. 2015), any likelihood and estimator"),
    ModelSpec("sgpr", ("elbo",), build=build_sgpr, own_objective="elbo", collapsed=True, gaussian_only=True,
              full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
              description="collapsed SGPR / VFE (Titsias 2009)"),
    ModelSpec("fitc", ("elbo",), build=build_fitc, own_objective="fitc", collapsed=True, gaussian_only=True,
              full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
              description="FITC (Snelson & Ghahramani 2006), collapsed"),
    ModelSpec("exact_gp", ("elbo",), build=build_exact_gp, own_objective="mll", gaussian_only=True,
              full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
              description="full GP on its marginal likelihood"),
    ModelSpec("pac_gp", _PAC, build=build_pac_gp, gaussian_only=True, full_batch_only=True, zero_mean_only=True,
              pac_evaluable=True, trained_on="a PAC-Bayes bound", description="full PAC-GP (Reeb et al. 2018)"),
    ModelSpec("pac_sgp", _PAC, build=build_pac_sgp, gaussian_only=True, full_batch_only=True, zero_mean_only=True,
              pac_evaluable=True, trained_on="a PAC-Bayes bound", description="sparse PAC-SGP (Reeb et al. 2018)"),
    # Sheth & Khardon (2016): the extended LGM optimised by GRAD / FPb / FPi (lgm.*), with its own fit loop
    *(ModelSpec(name, ("elbo",), execute=execute_lgm, own_objective="vlb", label=lambda cfg: cfg.lgm.optimizer,
                config_section="lgm", description=f"extended LGM, {kind} (dlm_bench/lgm)")
      for name, kind in (("lgm_glm", "GLM"), ("lgm_gp", "full GP"), ("lgm_sparse", "sparse GP, fixed inducing inputs"))),
    # Dezfouli & Bonilla (2015): Q latent GPs, FG / MoG posteriors, black-box likelihoods (savigp.*)
    ModelSpec("savigp", ("elbo",), execute=execute_savigp, own_objective="elbo", config_section="savigp",
              label=lambda cfg: f"{cfg.savigp.posterior}{cfg.savigp.components if cfg.savigp.posterior == 'mog' else ''}",
              description="SAVIGP (dlm_bench/savigp)"),
    # Sheth, Wang & Khardon (2015): sparse / SoD GGPM, Laplace, grad, dual, FP (sggpm.*)
    ModelSpec("sggpm", ("elbo",), execute=execute_sggpm, own_objective="vlb", config_section="sggpm",
              label=lambda cfg: cfg.sggpm.method, description="sparse variational GGPM (dlm_bench/sggpm)"),
)}

__all__ = [
    "MODELS", "ModelSpec", "ModelBundle", "SVGP", "SVGPBundle", "CollapsedBundle", "SqDLMBundle",
    "build_svgp", "build_sgpr", "build_fitc", "build_sq_dlm",
    "ExactGPBundle", "PacGPBundle", "PacSGPBundle", "build_exact_gp", "build_pac_gp", "build_pac_sgp",
]
