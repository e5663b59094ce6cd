"""Estimator registry: how the likelihood term of an SVGP objective is computed.

`mll_class(objective, estimator)` -> the GPyTorch-style MLL class:
  exact       closed form: GPyTorch's own classes, which call the likelihood's expected_log_prob /
              log_marginal (Gaussian; probit for DLM; Poisson-exp for the ELBO)
  quadrature  log-space Gauss-Hermite (estimators/quadrature.py), any likelihood
  bmc         reparameterised Monte Carlo, log-mean-exp over L samples (estimators/bmc.py)
  smooth_bmc  bMC with a smoothing constant nu in the denominator (estimators/smooth_bmc.py), dlm only
  ups         unbiased product-sampling gradients (estimators/ups.py), dlm only
Only the SVGP objectives with a likelihood term (elbo, dlm) have estimators.
SAMPLING: the estimators that take `estimator.num_samples`.
"""

import gpytorch

from .bmc import BMCPredictiveLogLikelihood, BMCVariationalELBO
from .quadrature import QuadraturePredictiveLogLikelihood, QuadratureVariationalELBO
from .smooth_bmc import SmoothBMCPredictiveLogLikelihood
from .ups import UPSPredictiveLogLikelihood

ESTIMATORS = {
    "exact": {"elbo": gpytorch.mlls.VariationalELBO, "dlm": gpytorch.mlls.PredictiveLogLikelihood},
    "bmc": {"elbo": BMCVariationalELBO, "dlm": BMCPredictiveLogLikelihood},
    "quadrature": {"elbo": QuadratureVariationalELBO, "dlm": QuadraturePredictiveLogLikelihood},
    "smooth_bmc": {"dlm": SmoothBMCPredictiveLogLikelihood},
    "ups": {"dlm": UPSPredictiveLogLikelihood},
}

SAMPLING = ("bmc", "smooth_bmc", "ups")


def mll_class(objective: str, estimator: str):
    return ESTIMATORS[estimator][objective]


def effective_estimator(objective: str, estimator: str, likelihood: str | None) -> str:
    """`exact` where the likelihood has no closed form for the objective's likelihood term (probit ELBO,
    Poisson DLM, logistic, Student-t) means the deterministic log-space quadrature; run.json records it."""
    from ..likelihoods import has_closed_form

    if estimator == "exact" and likelihood is not None and objective in ("elbo", "dlm"):
        if not has_closed_form(likelihood, objective):
            return "quadrature"
    return estimator


__all__ = [
    "ESTIMATORS", "SAMPLING", "BMCPredictiveLogLikelihood", "BMCVariationalELBO", "QuadraturePredictiveLogLikelihood",
    "QuadratureVariationalELBO", "SmoothBMCPredictiveLogLikelihood", "UPSPredictiveLogLikelihood", "mll_class",
    "effective_estimator",
]
