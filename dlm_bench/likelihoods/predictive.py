"""The predictive distribution p(y) = int p(y|f) N(f|mu, var) df of a likelihood without a closed form, as a
torch Distribution (what `likelihood.marginal(q_f)` and the GPyTorch idiom `likelihood(model(x))` return).

`log_prob(y)` is the likelihood's log-space path (`predictive_log_marginal`: a closed form or adaptive
Gauss-Hermite with logsumexp), `mean` / `variance` its closed forms or quadrature (`predictive_mean`,
`predictive_variance`), and `sample()` draws f ~ N(mu, var), then y ~ p(y|f) (the likelihood's `forward(f)`).
Binary likelihoods return a plain torch Bernoulli instead (every predictive of a 0/1 variable is one).
"""

from __future__ import annotations

import torch
from torch.distributions import Distribution


class LatentGaussianPredictive(Distribution):
    """p(y_i) = E_N(f_i|mu_i, var_i)[p(y_i|f_i)], independent over the batch (no rsample: y may be discrete)."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, likelihood, mu: torch.Tensor, var: torch.Tensor):
        self.likelihood = likelihood
        self.loc, self.var = torch.broadcast_tensors(mu, var)
        super().__init__(batch_shape=self.loc.shape, validate_args=False)

    @property
    def support(self):
        return self.likelihood.forward(self.loc).support

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        y, mu, var = torch.broadcast_tensors(torch.as_tensor(value, dtype=self.loc.dtype, device=self.loc.device),
                                             self.loc, self.var)
        return self.likelihood.predictive_log_marginal(y, mu, var)

    @property
    def mean(self) -> torch.Tensor:
        return self.likelihood.predictive_mean(self.loc, self.var)

    @property
    def variance(self) -> torch.Tensor:
        return self.likelihood.predictive_variance(self.loc, self.var)

    @torch.no_grad()
    def sample(self, sample_shape=torch.Size()) -> torch.Tensor:
        shape = self._extended_shape(sample_shape)
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.likelihood.forward(self.loc + self.var.clamp_min(0).sqrt() * eps).sample()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.likelihood).__name__}, batch_shape={tuple(self.batch_shape)})"
