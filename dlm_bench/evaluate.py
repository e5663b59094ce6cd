"""Predictive metrics. NLL is the mean over test points of -log E_q(f)[p(y|f)]; for the Gaussian
likelihood that is the exact log density of N(y | mu, var_f + noise)."""

from __future__ import annotations

import math

import gpytorch
import torch


@torch.no_grad()
def predict_f(model, X: torch.Tensor, batch_size: int = 4096) -> tuple[torch.Tensor, torch.Tensor]:
    """Marginal mean and variance of q(f(x)) at each row of X (batched to bound memory)."""
    model.eval()
    means, variances = [], []
    with gpytorch.settings.skip_posterior_variances(False):
        for xb in X.split(batch_size):
            f = model(xb)
            means.append(f.mean)
            variances.append(f.variance)
    return torch.cat(means), torch.cat(variances)


@torch.no_grad()
def regression_metrics(bundle, X: torch.Tensor, y: torch.Tensor, y_scale: float, prefix: str) -> dict:
    """`{prefix}_nll`, `{prefix}_mse` in normalised units and `..._raw` in original units, for a
    Gaussian likelihood. With y = (y_raw - mean) / scale: nll_raw = nll + log(scale), mse_raw = mse * scale^2.
    A bundle without a predictive variance (var None: square-loss DLM) gets the MSE only.
    """
    if X.shape[0] == 0:
        return {}
    bundle.eval()
    mu, var = bundle.predict_f(X)
    mse = (y - mu) ** 2
    out = {f"{prefix}_mse": mse.mean().item()}
    out[f"{prefix}_mse_raw"] = out[f"{prefix}_mse"] * y_scale**2
    if var is not None and bundle.noise is not None:  # free-form PAC-SGP has no noise parameter
        pred_var = var + bundle.noise
        nll = 0.5 * (torch.log(2 * math.pi * pred_var) + (y - mu) ** 2 / pred_var)
        out[f"{prefix}_nll"] = nll.mean().item()
        out[f"{prefix}_nll_raw"] = out[f"{prefix}_nll"] + math.log(y_scale)
    return out
