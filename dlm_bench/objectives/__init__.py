"""Objective registry: config name (`objective.name`) -> what implements it.

`elbo` and `dlm` are GPyTorch's own MLL classes (used with estimator=exact; estimators/ holds the
sampled versions): `VariationalELBO(beta=...)` is the (beta-)ELBO and `PredictiveLogLikelihood(beta=...)`
is the log-loss DLM objective of Wei et al. (2021), eq. (3):
    -loss = mean_i log E_q(f_i)[p(y_i|f_i)] - beta * KL(q(u) || p(u)) / N.
`sq_dlm` is the square-loss DLM closed form (objectives/sq_dlm.py, used by models/sq_dlm.py).
`pac_kl` / `pac_sqrt` are the PAC-Bayes bounds B and B_Pin (pac/bound.py, used by models/pac_gp.py).
"""

import gpytorch

from ..config.capabilities import ObjectiveSpec
from ..pac.bound import bound_kl, bound_pinsker
from .sq_dlm import sq_dlm_solve

_PAC_MODELS = ("pac_gp", "pac_sgp")
OBJECTIVES = {s.name: s for s in (
    ObjectiveSpec("elbo", gpytorch.mlls.VariationalELBO, select_by="val_nll", description="(beta-)ELBO"),
    ObjectiveSpec("dlm", gpytorch.mlls.PredictiveLogLikelihood, select_by="val_nll", fixed_hyperparameters=True,
                  description="log-loss DLM (Wei et al. 2021, eq. 3)"),
    ObjectiveSpec("sq_dlm", sq_dlm_solve, select_by="val_mse", fixed_hyperparameters=True, gaussian_only=True,
                  full_batch_only=True, zero_mean_only=True, description="square-loss DLM, closed-form q(u)"),
    # kl-PAC-GP / kl-PAC-SGP: B of Reeb et al. (2018), eq. (5); sqrt-PAC: the Pinsker bound B_Pin
    ObjectiveSpec("pac_kl", bound_kl, select_by="bound", has_beta=False, models=_PAC_MODELS, pac_bound=True,
                  description="PAC-Bayes bound B (kl-inverse)"),
    ObjectiveSpec("pac_sqrt", bound_pinsker, select_by="bound", has_beta=False, models=_PAC_MODELS, pac_bound=True,
                  description="PAC-Bayes bound B_Pin (Pinsker)"),
)}


def pac_evaluation(cfg) -> bool:
    """Whether a run gets the PAC-Bayes metrics: asked for (eval.pac=true; the PAC experiments set it), or implied
    by a PAC-Bayes objective."""
    asked = bool(cfg.get("eval", {}).get("pac", False))
    obj = OBJECTIVES.get(cfg.objective.name)
    return asked or bool(obj and obj.pac_bound)


__all__ = ["OBJECTIVES", "pac_evaluation"]
