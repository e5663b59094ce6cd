"""smooth-bMC (Wei et al. 2021, supplement sec. 2): bMC for the DLM term with a smoothing constant nu
added to the denominator of the gradient estimate,

    d_i = (1/L sum_l grad p(y_i|f_i^(l))) / (1/L sum_l p(y_i|f_i^(l)) + nu),

which is exactly the gradient of log(1/L sum_l p(y_i|f_i^(l)) + nu) with reparameterised samples
f_i^(l) = mu_i + sqrt(v_i) eps_l; that is the loss used here (computed with logaddexp, in log space).
nu = 0 is bMC. The paper's Fig. 8 uses nu = 1e-4 (the default).
"""

from __future__ import annotations

from .bmc import _BMC, log_mean_likelihood, sampled_log_likelihoods

DEFAULT_NU = 1e-4


class SmoothBMCPredictiveLogLikelihood(_BMC):
    def __init__(self, likelihood, model, num_data, beta=1.0, num_samples: int = 10, nu: float | None = None,
                 combine_terms=True):
        super().__init__(likelihood, model, num_data, beta=beta, num_samples=num_samples, combine_terms=combine_terms)
        self.nu = DEFAULT_NU if nu is None else float(nu)
        if not self.nu >= 0:
            raise ValueError(f"smooth-bMC needs nu >= 0, got {nu}")

    def _log_likelihood_term(self, approximate_dist_f, target, **kwargs):
        log_p = sampled_log_likelihoods(self.likelihood, approximate_dist_f, target, self.num_samples)
        return log_mean_likelihood(log_p, self.nu).sum(-1)
