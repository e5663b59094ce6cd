"""What every run with the PAC-Bayes evaluation (eval.pac=true) reports (Reeb et al. 2018, sec. 4 and App. D): after training, the prior
hyperparameters ln theta = (ln l_1^2, ..., ln l_d^2, ln sigma_s^2) are rounded to the grid Theta, and the
bound is evaluated for the rounded prior P^theta and the method's own posterior Q -- for PAC-GP / PAC-SGP
and equally for the full GP, VFE and FITC trained on their usual objectives.

A bundle qualifies by having `kernel` (a ScaleKernel), `pac_kl()` (KL(Q || P^theta) on its training
data) and `predict_f(X)` (the noise-free marginals of Q).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from .bound import bound_kl, bound_pinsker, grid_points, log_theta_size, round_to_grid
from .losses import gibbs_risk


def num_prior_hypers(kernel) -> int:
    """T: one per lengthscale plus the signal variance (SE-ARD: d + 1, SE: 2)."""
    return int(kernel.base_kernel.lengthscale.numel()) + 1


@torch.no_grad()
def round_kernel_(kernel, grid_L: float, grid_G: int) -> torch.Tensor:
    """Round ln(l^2) and ln(sigma_s^2) of a ScaleKernel(RBF) in place; returns the rounded ln theta."""
    ls = kernel.base_kernel.lengthscale
    log_theta = torch.cat([(2.0 * ls.log()).reshape(-1), kernel.outputscale.log().reshape(-1)])
    r = round_to_grid(log_theta, grid_L, grid_G)
    kernel.base_kernel.lengthscale = torch.exp(0.5 * r[:-1]).reshape(ls.shape)
    kernel.outputscale = torch.exp(r[-1])
    return r


@torch.no_grad()
def pac_metrics(bundle, pac_cfg, X_train, y_train, X_test, y_test) -> dict:
    """Round (if pac_cfg.round) in place, then bound, bound_pinsker, gibbs_train, gibbs_test, kl_over_n,
    log_theta (= ln|Theta|). The caller computes test_mse etc. afterwards, with the rounded theta."""
    if pac_cfg.round:
        round_kernel_(bundle.kernel, pac_cfg.grid_L, grid_points(pac_cfg))
        if hasattr(bundle, "clear_caches"):
            bundle.clear_caches()
    bundle.eval()
    n = X_train.shape[0]
    loss, eps = pac_cfg.loss.value, pac_cfg.epsilon
    log_theta = log_theta_size(num_prior_hypers(bundle.kernel), pac_cfg.grid_L, grid_points(pac_cfg))
    kl = bundle.pac_kl()
    m, v = bundle.predict_f(X_train)
    risk = gibbs_risk(loss, y_train, m, v, eps).mean()
    out = {
        "bound": bound_kl(risk, kl, n, log_theta, pac_cfg.delta).item(),
        "bound_pinsker": bound_pinsker(risk, kl, n, log_theta, pac_cfg.delta).item(),
        "gibbs_train": risk.item(),
        "kl_over_n": (kl / n).item(),
        "log_theta": log_theta,
    }
    if X_test.shape[0]:
        mt, vt = bundle.predict_f(X_test)
        out["gibbs_test"] = gibbs_risk(loss, y_test, mt, vt, eps).mean().item()
    return out


@torch.no_grad()
def write_predictive_1d(bundle, run_dir: Path, X_train, y_train, pac_cfg, grid_size: int = 300) -> Path | None:
    """One-dimensional inputs only (snelson, Fig. 1): Q's noise-free predictive mean and variance on a grid,
    the training data, Z before and after training and the noise, as predictive.json (normalised units)."""
    if X_train.shape[1] != 1:
        return None
    lo, hi = X_train.min().item(), X_train.max().item()
    pad = 0.1 * (hi - lo)
    grid = torch.linspace(lo - pad, hi + pad, grid_size, dtype=X_train.dtype, device=X_train.device).unsqueeze(-1)
    mean, var = bundle.predict_f(grid)
    noise = bundle.noise
    out = {
        "x": grid.squeeze(-1).tolist(), "mean": mean.tolist(), "var": var.tolist(),
        "X_train": X_train.squeeze(-1).tolist(), "y_train": y_train.tolist(),
        "noise": None if noise is None else noise.item(), "epsilon": pac_cfg.epsilon,
        "Z": bundle.Z.detach().squeeze(-1).tolist() if hasattr(bundle, "Z") else None,
        "Z_init": bundle.Z_init.squeeze(-1).tolist() if hasattr(bundle, "Z_init") else None,
    }
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "predictive.json"
    path.write_text(json.dumps(out))
    return path
