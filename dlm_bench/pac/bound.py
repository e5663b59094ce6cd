"""The PAC-Bayes bounds of Reeb et al. (2018), eq. (5) and B_Pin, and the hyperparameter grid Theta.

    B     = kl^{-1}(R_S, (KL + ln|Theta| + ln(2 sqrt(N)/delta)) / N)
    B_Pin = R_S + sqrt((KL + ln|Theta| + ln(2 sqrt(N)/delta)) / (2N))      (>= B by Pinsker)

Theta: each component of ln(theta) is rounded to the closest point of the equispaced (G+1)-point set
{-L, -L + 2L/G, ..., L} (L = 6, G = 1200: two decimals in [-6, 6]), so ln|Theta| = T ln(G+1) with T the
number of prior hyperparameters (SE-ARD: d lengthscales + signal variance; SE: 2). The noise is a
parameter of Q, not of the prior, and is not rounded (sec. 3.1, footnote 4).
"""

from __future__ import annotations

import math

import torch

from .kl_inverse import kl_inverse


def log_theta_size(num_hypers: int, grid_L: float = 6.0, grid_G: int = 1200) -> float:
    """ln|Theta| = T ln(G + 1)."""
    if grid_G < 1 or grid_L <= 0:
        raise ValueError(f"the hyperparameter grid needs L > 0 and G >= 1, got L={grid_L}, G={grid_G}")
    return num_hypers * math.log(grid_G + 1)


def grid_points(pac_cfg) -> int:
    """G of a pac config: grid_G, or 2 L 10^r when round_digits r is set (App. F's parametrisation)."""
    r = getattr(pac_cfg, "round_digits", None)
    return int(round(2 * pac_cfg.grid_L * 10**r)) if r is not None else int(pac_cfg.grid_G)


def round_to_grid(log_theta: torch.Tensor, grid_L: float = 6.0, grid_G: int = 1200) -> torch.Tensor:
    """Closest point of {-L + k 2L/G : k = 0..G} to each component (values outside [-L, L] are clamped)."""
    step = 2.0 * grid_L / grid_G
    k = torch.round((log_theta.clamp(-grid_L, grid_L) + grid_L) / step)
    return k * step - grid_L


def complexity(kl: torch.Tensor, n: int, log_theta: float, delta: float) -> torch.Tensor:
    """(KL + ln|Theta| + ln(2 sqrt(N)/delta)) / N, the second argument of kl^{-1} in eq. (5)."""
    if not 0 < delta <= 1:
        raise ValueError(f"delta must be in (0, 1], got {delta}")
    return (kl + log_theta + math.log(2.0 * math.sqrt(n) / delta)) / n


def bound_kl(risk: torch.Tensor, kl: torch.Tensor, n: int, log_theta: float, delta: float) -> torch.Tensor:
    """B(Q) of eq. (5)."""
    return kl_inverse(risk.clamp(0.0, 1.0), complexity(kl, n, log_theta, delta).clamp_min(0.0))


def bound_pinsker(risk: torch.Tensor, kl: torch.Tensor, n: int, log_theta: float, delta: float) -> torch.Tensor:
    """B_Pin(Q) = R_S + sqrt(complexity / 2) (may exceed 1)."""
    return risk + torch.sqrt(complexity(kl, n, log_theta, delta).clamp_min(0.0) / 2.0)


BOUNDS = {"pac_kl": bound_kl, "pac_sqrt": bound_pinsker}  # objective name -> training objective
