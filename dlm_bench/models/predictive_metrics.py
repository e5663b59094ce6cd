"""Predictive metrics, one path for every model and likelihood (Wei et al. 2021, supplement "Evaluation").

The bundle supplies the marginals of q(f) at the inputs (`predict_f`: SVGP, collapsed SGPR / FITC, exact GP,
PAC-GP each predict differently); the likelihood supplies the rest (likelihoods/base.py): which metrics its
task reports (`metrics`), the predictive log density (`predictive_log_marginal`), the point prediction
(`point_prediction`) and whether the targets are normalised (`raw_units`).

* `{part}_nll`: mean over points of -log E_q(f)[p(y|f)] (Gaussian: log N(y | mu, var + noise); probit:
  closed form; otherwise log-space adaptive Gauss-Hermite).
* `{part}_mse`: mean of (y - y_hat)^2, y_hat the predictive mean (regression).
* `{part}_error`: fraction of points whose predicted class (p(y=1) > 1/2) is wrong (binary).
* `{part}_mre`: mean of |y_hat - y| / max(1, y), y_hat the predictive mean (count).
* `_raw` twins in original units where the targets are normalised (y = (y_raw - mean) / scale):
  nll_raw = nll + log(scale), mse_raw = mse * scale^2.

A bundle without a predictive density (square-loss DLM: no variance; free-form PAC-SGP: no noise) is scored by
its latent mean with the mse only (and mse_raw).
"""

from __future__ import annotations

import math

import torch

# name -> per-point value from (likelihood, mu, var, y, y_hat)
METRICS = {
    "nll": lambda lik, mu, var, y, y_hat: -lik.predictive_log_marginal(y, mu, var),
    "mse": lambda lik, mu, var, y, y_hat: (y - y_hat) ** 2,
    "error": lambda lik, mu, var, y, y_hat: (y_hat != y).to(y.dtype),
    "mre": lambda lik, mu, var, y, y_hat: (y_hat - y).abs() / y.clamp_min(1.0),
}
# name -> (mean in normalised units, y_scale) -> the same in original units
RAW = {
    "nll": lambda value, scale: value + math.log(scale),
    "mse": lambda value, scale: value * scale**2,
}
POINT_ONLY = ("mse",)  # what a bundle without a predictive density reports


def predictive_likelihood(bundle, var):
    """The likelihood that turns the bundle's q(f) into p(y), or None where the method defines no predictive
    density: no latent variance (square-loss DLM), or a noise likelihood whose noise the bundle's predictive
    leaves out (free-form PAC-SGP, `bundle.noise is None`)."""
    likelihood = getattr(bundle, "likelihood", None)
    if var is None or likelihood is None:
        return None
    if hasattr(likelihood, "noise") and bundle.noise is None:
        return None
    if not hasattr(likelihood, "metrics"):
        raise TypeError(f"{type(likelihood).__name__} is not a registered likelihood (dlm_bench.likelihoods): "
                        "it has no predictive-metrics contract")
    return likelihood


@torch.no_grad()
def predictive_metrics(bundle, X: torch.Tensor, y: torch.Tensor, y_scale: float, part: str) -> dict:
    """`{part}_<metric>` (and `_raw` twins) for the metrics the bundle's likelihood names; {} for no points."""
    if X.shape[0] == 0:
        return {}
    bundle.eval()
    mu, var = bundle.predict_f(X)
    lik = predictive_likelihood(bundle, var)
    if lik is None:
        names, y_hat, raw_units = POINT_ONLY, mu, True
    else:
        names, y_hat, raw_units = lik.metrics, lik.point_prediction(mu, var), lik.raw_units
    out = {}
    for name in names:
        value = METRICS[name](lik, mu, var, y, y_hat).mean().item()
        out[f"{part}_{name}"] = value
        if raw_units and name in RAW:
            out[f"{part}_{name}_raw"] = RAW[name](value, y_scale)
    return out
