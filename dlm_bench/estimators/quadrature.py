"""`estimator=quadrature`: the likelihood term by the adaptive quadrature of likelihoods/quadrature/.

DLM:  sum_i log E_q[p(y_i|f_i)]  (logsumexp over panels around q, the likelihood's features and the tilted mode)
ELBO: sum_i E_q[log p(y_i|f_i)]
Our likelihoods integrate themselves (`quadrature_log_marginal` / `quadrature_expected_log_prob`, which know
their features and derivatives); any other GPyTorch likelihood that can evaluate log p(y|f) at arbitrary f
(`forward(f).log_prob(y)`, GaussianLikelihood included, useful as a check against the closed form) goes through
the same rule with q's panels and the tilted mode only.
"""

from __future__ import annotations

from ..likelihoods import quadrature as quad
from ..training.gpytorch_internals import ApproximateMLL


def log_lik_fn(likelihood):
    """(y, f) -> log p(y|f) for any GPyTorch likelihood (ours have a direct `log_prob_f`)."""
    direct = getattr(likelihood, "log_prob_f", None)
    if direct is not None:
        return direct
    return lambda y, f: likelihood.forward(f).log_prob(y)


def log_marginal(likelihood, y, mu, var):
    """Per-point log E_q[p(y|f)] by the adaptive rule, for any likelihood."""
    own = getattr(likelihood, "quadrature_log_marginal", None)
    if own is not None:
        return own(y, mu, var)
    return quad.log_marginal(log_lik_fn(likelihood), y, mu, var)


def expected_log_prob(likelihood, y, mu, var):
    """Per-point E_q[log p(y|f)] by the adaptive rule, for any likelihood."""
    own = getattr(likelihood, "quadrature_expected_log_prob", None)
    if own is not None:
        return own(y, mu, var)
    return quad.expected_log_prob(log_lik_fn(likelihood), y, mu, var)


class QuadraturePredictiveLogLikelihood(ApproximateMLL):
    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        return log_marginal(self.likelihood, target, approximate_dist_f.mean, approximate_dist_f.variance).sum(-1)


class QuadratureVariationalELBO(ApproximateMLL):
    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        return expected_log_prob(self.likelihood, target, approximate_dist_f.mean,
                                 approximate_dist_f.variance).sum(-1)
