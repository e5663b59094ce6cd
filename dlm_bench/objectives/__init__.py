"""Objective registry: config name (`objective.name`) -> GPyTorch MLL class.

Both are GPyTorch's own: `VariationalELBO(beta=...)` is the (beta-)ELBO and
`PredictiveLogLikelihood(beta=...)` is the log-loss DLM objective of Wei et al. (2021), eq. (3):
    -loss = mean_i log E_q(f_i)[p(y_i|f_i)] - beta * KL(q(u) || p(u)) / N.
"""

import gpytorch

OBJECTIVES = {
    "elbo": gpytorch.mlls.VariationalELBO,
    "dlm": gpytorch.mlls.PredictiveLogLikelihood,
}

__all__ = ["OBJECTIVES"]
