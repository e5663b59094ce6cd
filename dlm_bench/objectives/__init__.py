"""Objective registry: config name (`objective.name`) -> what implements it.

`elbo` and `dlm` are GPyTorch's own MLL classes (used with estimator=exact; estimators/ holds the
sampled versions): `VariationalELBO(beta=...)` is the (beta-)ELBO and `PredictiveLogLikelihood(beta=...)`
is the log-loss DLM objective of Wei et al. (2021), eq. (3):
    -loss = mean_i log E_q(f_i)[p(y_i|f_i)] - beta * KL(q(u) || p(u)) / N.
`sq_dlm` is the square-loss DLM closed form (objectives/sq_dlm.py, used by models/sq_dlm.py).
`pac_kl` / `pac_sqrt` are the PAC-Bayes bounds B and B_Pin (pac/bound.py, used by models/pac_gp.py).

SELECTION_METRIC: the validation metric a beta grid is selected on (Wei et al. 2021, sec. 6).
"""

import gpytorch

from ..pac.bound import bound_kl, bound_pinsker
from .sq_dlm import sq_dlm_solve

OBJECTIVES = {
    "elbo": gpytorch.mlls.VariationalELBO,
    "dlm": gpytorch.mlls.PredictiveLogLikelihood,
    "sq_dlm": sq_dlm_solve,
    "pac_kl": bound_kl,  # kl-PAC-GP / kl-PAC-SGP: B of Reeb et al. (2018), eq. (5)
    "pac_sqrt": bound_pinsker,  # sqrt-PAC-GP / sqrt-PAC-SGP: the Pinsker bound B_Pin
}

SELECTION_METRIC = {"elbo": "val_nll", "dlm": "val_nll", "sq_dlm": "val_mse", "pac_kl": "bound", "pac_sqrt": "bound"}

__all__ = ["OBJECTIVES", "SELECTION_METRIC"]
