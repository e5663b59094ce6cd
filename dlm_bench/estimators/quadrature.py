"""`estimator=quadrature`: the likelihood term by log-space Gauss-Hermite quadrature (likelihoods/quadrature.py).

DLM:  sum_i log E_q[p(y_i|f_i)]  (adaptive GH, logsumexp; no underflow for peaked likelihoods)
ELBO: sum_i E_q[log p(y_i|f_i)]  (plain GH)
Works for every likelihood that can evaluate log p(y|f) at arbitrary f (`forward(f).log_prob(y)`),
GaussianLikelihood included (useful as a check against the closed form).
"""

from __future__ import annotations

from gpytorch.mlls._approximate_mll import _ApproximateMarginalLogLikelihood

from ..likelihoods.quadrature import gh_expected_log_prob, gh_log_marginal

NUM_NODES = 20


def log_lik_fn(likelihood):
    """(y, f) -> log p(y|f) for any GPyTorch likelihood (ours have a direct `log_prob_f`)."""
    direct = getattr(likelihood, "log_prob_f", None)
    if direct is not None:
        return direct
    return lambda y, f: likelihood.forward(f).log_prob(y)


class QuadraturePredictiveLogLikelihood(_ApproximateMarginalLogLikelihood):
    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        mu, var = approximate_dist_f.mean, approximate_dist_f.variance
        return gh_log_marginal(log_lik_fn(self.likelihood), target, mu, var, NUM_NODES,
                               getattr(self.likelihood, "log_prob_f_derivs", None)).sum(-1)


class QuadratureVariationalELBO(_ApproximateMarginalLogLikelihood):
    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        mu, var = approximate_dist_f.mean, approximate_dist_f.variance
        return gh_expected_log_prob(log_lik_fn(self.likelihood), target, mu, var, NUM_NODES).sum(-1)
