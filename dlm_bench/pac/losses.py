"""Bounded regression losses and their Gibbs risks under a Gaussian prediction (Reeb et al. 2018, App. C).

For a prediction f ~ N(m, s^2) at a point with target y, `gibbs_risk(loss, y, m, s2, eps)` is the closed
form of E_f[l(y, f)] (eqs. 26-29), elementwise; the empirical Gibbs risk R_S(Q) of eq. (25) is its mean.
Write d = y - m, Phi the standard normal CDF, phi its density, a = (d - eps)/s, b = (d + eps)/s.

- `zero_one` (default, eq. 18/26): l = 1[|y - f| > eps];  E = 1 - Phi(b) + Phi(a).
- `clipped_square` (eq. 19/27): l = min(((y - f)/eps)^2, 1). With u = y - f = d + s z, z ~ N(0, 1) and the
  band |u| <= eps <=> z in [A, B], A = (-eps - d)/s, B = (eps - d)/s, P0 = Phi(B) - Phi(A):
  E = 1 - P0 + E[u^2 1_band] / eps^2,  E[u^2 1_band] = (d^2 + s^2) P0 + 2 d s (phi(A) - phi(B)) + s^2 (A phi(A) - B phi(B))
  (derived here, checked against Monte Carlo; algebraically the paper's eq. 27).
- `exp` (inverted Gaussian, l_exp, eq. 20/28): l = 1 - exp(-((y - f)/eps)^2);
  E = 1 - exp(-d^2 / (2 s^2 + eps^2)) / sqrt(1 + 2 s^2/eps^2). (Eq. 28 as printed has 2 s instead of 2 s^2
  in the exponent; the Monte Carlo test in tests/unit/pac/test_pac.py confirms s^2.)
- `relative` (eq. 21/29 with r_pm(y) = y +- eps |y|): l = 1[f outside [y - eps|y|, y + eps|y|]];
  E = 1 - Phi((y + eps|y| - m)/s) + Phi((y - eps|y| - m)/s).
"""

from __future__ import annotations

import math

import torch

_SQRT2 = math.sqrt(2.0)
_VAR_FLOOR = 1e-300  # s = 0 (a deterministic prediction) is the limit of the formulas


def _Phi(z):
    return 0.5 * torch.special.erfc(-z / _SQRT2)


def _phi(z):
    return torch.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def _band(lo, hi, m, s):
    """P(f outside [lo, hi]) for f ~ N(m, s^2)."""
    return _Phi((lo - m) / s) + _Phi((m - hi) / s)  # = Phi((lo-m)/s) + 1 - Phi((hi-m)/s), without cancellation


def _zero_one(y, m, s2, eps):
    s = s2.clamp_min(_VAR_FLOOR).sqrt()
    return _band(y - eps, y + eps, m, s)


def _relative(y, m, s2, eps):
    s = s2.clamp_min(_VAR_FLOOR).sqrt()
    w = eps * y.abs()
    return _band(y - w, y + w, m, s)


def _clipped_square(y, m, s2, eps):
    # u = y - f ~ N(d, s^2); E[min(u^2/eps^2, 1)] = 1 - P0 + (E[u^2 1_{|u|<=eps}]) / eps^2
    s = s2.clamp_min(_VAR_FLOOR).sqrt()
    d = y - m
    a, b = (-eps - d) / s, (eps - d) / s  # standardised band edges of u
    p0 = _Phi(b) - _Phi(a)
    # E[u^2 1] with u = d + s z, z in [a, b]:  (d^2 + s^2) p0 + 2 d s (phi(a) - phi(b)) + s^2 (a phi(a) - b phi(b))
    m2 = (d * d + s2) * p0 + 2 * d * s * (_phi(a) - _phi(b)) + s2 * (a * _phi(a) - b * _phi(b))
    return (1 - p0 + m2 / eps**2).clamp(0.0, 1.0)


def _exp(y, m, s2, eps):
    d2 = (y - m) ** 2
    return 1 - torch.exp(-d2 / (2 * s2 + eps**2)) / torch.sqrt(1 + 2 * s2 / eps**2)


LOSSES = {"zero_one": _zero_one, "clipped_square": _clipped_square, "exp": _exp, "relative": _relative}


def pointwise_loss(name: str, y: torch.Tensor, f: torch.Tensor, eps: float) -> torch.Tensor:
    """l(y, f) itself (for Monte Carlo checks and deterministic predictions)."""
    u = y - f
    if name == "zero_one":
        return (u.abs() > eps).to(u.dtype)
    if name == "clipped_square":
        return torch.clamp((u / eps) ** 2, max=1.0)
    if name == "exp":
        return 1 - torch.exp(-((u / eps) ** 2))
    if name == "relative":
        return (u.abs() > eps * y.abs()).to(u.dtype)
    raise ValueError(f"unknown PAC loss {name!r}; valid choices: {', '.join(LOSSES)}")


def gibbs_risk(name: str, y: torch.Tensor, mean: torch.Tensor, var: torch.Tensor, eps: float) -> torch.Tensor:
    """E_{f ~ N(mean, var)} l(y, f) per point (differentiable in mean and var)."""
    if name not in LOSSES:
        raise ValueError(f"unknown PAC loss {name!r}; valid choices: {', '.join(LOSSES)}")
    if not eps > 0:
        raise ValueError(f"the loss scale epsilon must be > 0, got {eps}")
    return LOSSES[name](y, mean, var, eps)
