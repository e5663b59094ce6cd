"""Estimator registry: how the likelihood term of an SVGP objective is computed.

`mll_class(objective, estimator)` -> the GPyTorch-style MLL class:
  exact       closed form: GPyTorch's own classes, which call the likelihood's expected_log_prob /
              log_marginal (Gaussian; probit for DLM; Poisson-exp for the ELBO)
  quadrature  log-space Gauss-Hermite (estimators/quadrature.py), any likelihood
  bmc         reparameterised Monte Carlo, log-mean-exp over L samples (estimators/bmc.py)
  smooth_bmc  bMC with a smoothing constant nu in the denominator (estimators/smooth_bmc.py), dlm only
  ups         unbiased product-sampling gradients (estimators/ups.py), dlm only
Only the SVGP objectives with a likelihood term (elbo, dlm) have estimators.
"""

import gpytorch

from ..config.capabilities import EstimatorSpec
from .bmc import BMCPredictiveLogLikelihood, BMCVariationalELBO
from .quadrature import QuadraturePredictiveLogLikelihood, QuadratureVariationalELBO
from .smooth_bmc import SmoothBMCPredictiveLogLikelihood
from .ups import UPSPredictiveLogLikelihood

ESTIMATORS = {s.name: s for s in (
    EstimatorSpec("exact", {"elbo": gpytorch.mlls.VariationalELBO, "dlm": gpytorch.mlls.PredictiveLogLikelihood}),
    EstimatorSpec("bmc", {"elbo": BMCVariationalELBO, "dlm": BMCPredictiveLogLikelihood}, sampling=True),
    EstimatorSpec("quadrature", {"elbo": QuadratureVariationalELBO, "dlm": QuadraturePredictiveLogLikelihood}),
    EstimatorSpec("smooth_bmc", {"dlm": SmoothBMCPredictiveLogLikelihood}, sampling=True, extra_keys=("nu",)),
    EstimatorSpec("ups", {"dlm": UPSPredictiveLogLikelihood}, sampling=True, non_gaussian_only=True),
)}


def mll_class(objective: str, estimator: str):
    return ESTIMATORS[estimator].mlls[objective]


def mll_kwargs(estimator_cfg, estimator: str) -> dict:
    """The MLL constructor's estimator arguments: num_samples for sampling estimators, then declared extra keys."""
    spec = ESTIMATORS[estimator]
    kwargs = {"num_samples": estimator_cfg.num_samples} if spec.sampling else {}
    kwargs.update({k: estimator_cfg.get(k) for k in spec.extra_keys})
    return kwargs


def effective_estimator(objective: str, estimator: str, likelihood: str | None) -> str:
    """`exact` where the likelihood has no closed form for the objective's likelihood term (probit ELBO,
    Poisson DLM, logistic, Student-t) means the deterministic log-space quadrature; run.json records it."""
    from ..likelihoods import has_closed_form

    if estimator == "exact" and likelihood is not None and objective in ("elbo", "dlm"):
        if not has_closed_form(likelihood, objective):
            return "quadrature"
    return estimator


__all__ = [
    "ESTIMATORS", "mll_kwargs", "BMCPredictiveLogLikelihood", "BMCVariationalELBO", "QuadraturePredictiveLogLikelihood",
    "QuadratureVariationalELBO", "SmoothBMCPredictiveLogLikelihood", "UPSPredictiveLogLikelihood", "mll_class",
    "effective_estimator",
]
