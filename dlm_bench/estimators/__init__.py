"""Estimator registry: how the likelihood term of an SVGP objective is computed.

`mll_class(objective, estimator)` -> the GPyTorch-style MLL class; `exact` is the closed form (GPyTorch's
own classes), `bmc` the reparameterised Monte Carlo estimate (estimators/bmc.py). Only the SVGP
objectives with a likelihood term (elbo, dlm) have estimators.
"""

import gpytorch

from .bmc import BMCPredictiveLogLikelihood, BMCVariationalELBO

ESTIMATORS = {
    "exact": {"elbo": gpytorch.mlls.VariationalELBO, "dlm": gpytorch.mlls.PredictiveLogLikelihood},
    "bmc": {"elbo": BMCVariationalELBO, "dlm": BMCPredictiveLogLikelihood},
}


def mll_class(objective: str, estimator: str):
    return ESTIMATORS[estimator][objective]


__all__ = ["ESTIMATORS", "BMCPredictiveLogLikelihood", "BMCVariationalELBO", "mll_class"]
