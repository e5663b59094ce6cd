"""Likelihood registry: config name (`model.likelihood`) -> class, and the default for a dataset task.

`gaussian` is GPyTorch's GaussianLikelihood (regression, closed forms); the others are in this package
(one per file), all with log-space computations. `model.likelihood: null` picks DEFAULT_FOR_TASK.
"""

from .base import ScalarLikelihood
from .logistic import LogisticLikelihood
from .poisson import PoissonExpLikelihood, PoissonSoftplusLikelihood
from .probit import ProbitLikelihood, log_normal_cdf
from .quadrature import gh_expected_log_prob, gh_log_marginal
from .student_t import StudentTLikelihood

LIKELIHOODS = {
    "gaussian": None,  # gpytorch.likelihoods.GaussianLikelihood, built in models/svgp.py
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
    "ProbitLikelihood", "LogisticLikelihood", "PoissonExpLikelihood", "PoissonSoftplusLikelihood",
    "StudentTLikelihood", "log_normal_cdf", "gh_log_marginal", "gh_expected_log_prob",
]
