"""Predictive metrics for the non-Gaussian likelihoods (Wei et al. 2021, supplement "Evaluation").

* `{p}_nll`: mean over points of -log E_q(f)[p(y|f)]: the closed form for probit, log-space (adaptive)
  Gauss-Hermite quadrature otherwise (Poisson, logistic, Student-t).
* binary: `{p}_error`, the fraction of points where the predicted class (p(y=1) > 1/2) is wrong.
* count: `{p}_mre`, mean of |y_hat - y| / max(1, y) with y_hat = E_q[E[y|f]] (exp link: exp(mu + v/2)).
* regression (Student-t): `{p}_mse` of the predictive mean mu, and `_raw` versions in original units.
Classification and count targets are not normalised, so their metrics have no `_raw` twin.
"""

from __future__ import annotations

import math

import torch


@torch.no_grad()
def glm_metrics(bundle, X: torch.Tensor, y: torch.Tensor, y_scale: float, prefix: str, task: str) -> dict:
    if X.shape[0] == 0:
        return {}
    bundle.eval()
    lik = bundle.likelihood
    mu, var = bundle.predict_f(X)
    out = {f"{prefix}_nll": -lik.predictive_log_marginal(y, mu, var).mean().item()}
    if task == "binary":
        log_p1 = lik.predictive_log_marginal(torch.ones_like(y), mu, var)
        pred = (log_p1 > math.log(0.5)).to(y.dtype)
        out[f"{prefix}_error"] = (pred != y).to(y.dtype).mean().item()
    elif task == "count":
        y_hat = lik.predictive_mean(mu, var)
        out[f"{prefix}_mre"] = ((y_hat - y).abs() / y.clamp_min(1.0)).mean().item()
    else:
        out[f"{prefix}_mse"] = ((y - mu) ** 2).mean().item()
        out[f"{prefix}_mse_raw"] = out[f"{prefix}_mse"] * y_scale**2
        out[f"{prefix}_nll_raw"] = out[f"{prefix}_nll"] + math.log(y_scale)
    return out
