"""Likelihood registry: config name (`model.likelihood`) -> class, and the default for a dataset task.

`gaussian` is GPyTorch's GaussianLikelihood with the metrics contract added (regression, closed forms); the
others are in this package (one per file), all with log-space computations. Every registered class is a real
GPyTorch likelihood (forward -> torch Distribution, marginal -> the predictive distribution) and passes
GPyTorch's BaseLikelihoodTestCase plus our own checks (tests/unit/likelihoods/test_likelihood_contract.py, generated from
this registry). `model.likelihood: null` picks DEFAULT_FOR_TASK. The contract: likelihoods/base.py.
"""

from .base import BinaryLikelihood, ScalarLikelihood
from .gaussian import GaussianLikelihood
from .logistic import LogisticLikelihood
from .poisson import PoissonExpLikelihood, PoissonSoftplusLikelihood
from .probit import ProbitLikelihood, log_normal_cdf
from .predictive import LatentGaussianPredictive
from .student_t import StudentTLikelihood

LIKELIHOODS = {
    "gaussian": GaussianLikelihood,
    "probit": ProbitLikelihood,
    "logistic": LogisticLikelihood,
    "poisson_exp": PoissonExpLikelihood,
    "poisson_softplus": PoissonSoftplusLikelihood,
    "student_t": StudentTLikelihood,
}

# Which likelihoods fit which dataset task (the first is the default).
TASK_LIKELIHOODS = {
    "regression": ("gaussian", "student_t"),
    "binary": ("probit", "logistic"),
    "count": ("poisson_exp", "poisson_softplus"),
}
DEFAULT_FOR_TASK = {task: names[0] for task, names in TASK_LIKELIHOODS.items()}


def has_closed_form(likelihood_name: str, objective: str) -> bool:
    """Whether the likelihood term of `objective` (elbo | dlm) has a closed form for this likelihood."""
    if likelihood_name == "gaussian":
        return True
    cls = LIKELIHOODS[likelihood_name]
    return cls.has_exact_log_marginal if objective == "dlm" else cls.has_exact_expected_log_prob


__all__ = [
    "LIKELIHOODS", "TASK_LIKELIHOODS", "DEFAULT_FOR_TASK", "has_closed_form", "ScalarLikelihood",
    "BinaryLikelihood", "GaussianLikelihood", "LatentGaussianPredictive",
    "ProbitLikelihood", "LogisticLikelihood", "PoissonExpLikelihood", "PoissonSoftplusLikelihood",
    "StudentTLikelihood", "log_normal_cdf",
]
