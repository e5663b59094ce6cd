"""Site expectations of the extended LGM (Sheth & Khardon 2016, eqs. 5-7).

For q(f_i) = N(m_i, v_i), `site_expectations(y, m, v)` returns per point
    E_i   = E_q[log phi_i(f_i)]            (every constant included, e.g. -log y! for counts)
    rho_i = dE_i/dm_i
    lam_i = 2 dE_i/dv_i  (= E_q[d^2 log phi_i / df^2] by Stein's lemma),   gamma_i = -lam_i  (eq. 6)
Gaussian, Poisson (log link) and Laplace are closed form (spec 1.6); logistic, probit, Student-t and ordinal
use Gauss-Hermite quadrature with log phi evaluated in log space. For the quadrature sites lam is the exact
v-derivative of the quadrature rule itself, so VLB gradients match finite differences of the same VLB.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special
import torch
from torch.nn.functional import logsigmoid

from ..errors import ConfigError

LOG_2PI = math.log(2.0 * math.pi)


class Site:
    """One likelihood family; `clip_gamma` says whether the FP operator must clip gamma at 0 (Student-t)."""

    name = ""
    clip_gamma = False
    log_concave = True

    def site_expectations(self, y, m, v):  # pragma: no cover - abstract
        raise TypeError

    def params(self) -> dict:
        return {}


class GaussianSite(Site):
    name = "gaussian"

    def __init__(self, noise_var: float = 1.0):
        self.s2 = float(noise_var)

    def site_expectations(self, y, m, v):
        r = y - m
        E = -0.5 * (LOG_2PI + math.log(self.s2)) - (r * r + v) / (2 * self.s2)
        return E, r / self.s2, torch.full_like(m, -1.0 / self.s2)

    def params(self):
        return {"noise_var": self.s2}


class PoissonSite(Site):
    """log link: E = y m - exp(m + v/2) - log y!  (Remark 1: gamma = exp(m + v/2), Conditions 1 + 2a)."""

    name = "poisson"

    def site_expectations(self, y, m, v):
        mu = torch.exp(m + 0.5 * v)
        E = y * m - mu - torch.lgamma(y + 1.0)
        return E, y - mu, -mu


class LaplaceSite(Site):
    """p(y|f) = exp(-|y - f| / b) / (2 b); closed forms of spec 1.6 (util/exp_log_laplace.m)."""

    name = "laplace"

    def __init__(self, scale: float = 1.0):
        self.b = float(scale)

    def site_expectations(self, y, m, v):
        s = torch.sqrt(v)
        a = (m - y) / s
        Phi_na = torch.special.ndtr(-a)
        phi_a = torch.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
        E = -math.log(2 * self.b) - (s * math.sqrt(2 / math.pi) * torch.exp(-0.5 * a * a) + (m - y) * (1 - 2 * Phi_na)) / self.b
        rho = (2 * Phi_na - 1) / self.b
        lam = -2 * phi_a / (s * self.b)
        return E, rho, lam

    def params(self):
        return {"scale": self.b}


class QuadratureSite(Site):
    """E, rho, lam by Gauss-Hermite: f = m + sqrt(v) x, E = sum_k w_k g(f_k), rho = sum_k w_k g'(f_k),
    lam = 2 dE/dv = sum_k w_k x_k g'(f_k) / sqrt(v). Subclasses give log phi (g) and its derivative."""

    def __init__(self, num_nodes: int = 20):
        if num_nodes < 2:
            raise ConfigError(f"lgm.quadrature_nodes must be >= 2, got {num_nodes}")
        x, w = scipy.special.roots_hermitenorm(num_nodes)  # probabilists' Hermite, weight exp(-x^2/2)
        self.x = torch.as_tensor(x, dtype=torch.float64)
        self.w = torch.as_tensor(w / w.sum(), dtype=torch.float64)
        self.num_nodes = num_nodes

    def log_phi(self, y, f):  # pragma: no cover - abstract
        raise TypeError

    def dlog_phi(self, y, f):  # pragma: no cover - abstract
        raise TypeError

    def site_expectations(self, y, m, v):
        x, w = self.x.to(m), self.w.to(m)
        s = torch.sqrt(v)[:, None]
        f = m[:, None] + s * x
        yy = y[:, None]
        E = self.log_phi(yy, f) @ w
        g1 = self.dlog_phi(yy, f)
        rho = g1 @ w
        lam = (g1 * x) @ w / s[:, 0]
        return E, rho, lam

    def params(self):
        return {"quadrature_nodes": self.num_nodes}


class LogisticSite(QuadratureSite):
    """sigma(y f), y in {-1, +1} (a 0/1 label is mapped to -1/+1)."""

    name = "logistic"

    def log_phi(self, y, f):
        return logsigmoid(y * f)

    def dlog_phi(self, y, f):
        return y * torch.sigmoid(-y * f)


class ProbitSite(QuadratureSite):
    name = "probit"

    def log_phi(self, y, f):
        return torch.special.log_ndtr(y * f)

    def dlog_phi(self, y, f):
        z = y * f
        # phi(z) / Phi(z) in log space (stable for very negative z)
        return y * torch.exp(-0.5 * z * z - 0.5 * LOG_2PI - torch.special.log_ndtr(z))


class StudentTSite(QuadratureSite):
    """Student-t, nu = 3, sigma^2 = 1/3 (paper L197): not log-concave, gamma can be < 0 and is clipped
    at 0 in the FP operator (paper L155, L179)."""

    name = "student_t"
    clip_gamma = True
    log_concave = False

    def __init__(self, num_nodes: int = 20, df: float = 3.0, scale2: float = 1.0 / 3.0):
        super().__init__(num_nodes)
        self.df, self.s2 = float(df), float(scale2)
        nu = self.df
        self.const = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi * self.s2)

    def log_phi(self, y, f):
        r = y - f
        return self.const - 0.5 * (self.df + 1) * torch.log1p(r * r / (self.df * self.s2))

    def dlog_phi(self, y, f):
        r = y - f
        return (self.df + 1) * r / (self.df * self.s2 + r * r)

    def params(self):
        return {"quadrature_nodes": self.num_nodes, "df": self.df, "scale2": self.s2}


class OrdinalSite(QuadratureSite):
    """Cumulative logit: p(y = k | f) = sigma(s (theta_k - f)) - sigma(s (theta_{k-1} - f)), k = 1..K,
    theta_0 = -inf, theta_K = +inf; `thresholds` theta_1 < ... < theta_{K-1}, slope s. Computed in log space:
    log[sigma(b) - sigma(a)] = log sigma(b) + log sigma(-a) + log(1 - exp(a - b))."""

    name = "ordinal"

    def __init__(self, thresholds, slope: float = 1.0, num_nodes: int = 100):
        super().__init__(num_nodes)
        th = torch.as_tensor(np.asarray(thresholds, dtype=float), dtype=torch.float64)
        if th.numel() < 1 or bool((th[1:] <= th[:-1]).any()):
            raise ConfigError(f"ordinal thresholds must be increasing, got {list(map(float, th))}")
        self.theta = torch.cat([torch.tensor([-math.inf], dtype=torch.float64), th,
                                torch.tensor([math.inf], dtype=torch.float64)])
        self.slope = float(slope)

    def _ab(self, y, f):
        k = y.long()  # classes 1..K
        th = self.theta.to(f)
        hi = th[k].expand_as(f)
        lo = th[k - 1].expand_as(f)
        return self.slope * (lo - f), self.slope * (hi - f)

    def log_phi(self, y, f):
        a, b = self._ab(y, f)
        # sigma(b) - sigma(a) = sigma(b) sigma(-a) (1 - exp(a - b)); infinite ends give log sigma = 0
        return logsigmoid(b) + logsigmoid(-a) + torch.log(-torch.expm1(a - b))

    def dlog_phi(self, y, f):
        a, b = self._ab(y, f)
        # d/df log p = s [sigma(a) + sigma(b) - 1]   (da/df = db/df = -s; the last log term is constant in f)
        return self.slope * (torch.sigmoid(a) + torch.sigmoid(b) - 1.0)

    def params(self):
        return {"quadrature_nodes": self.num_nodes, "thresholds": [float(t) for t in self.theta[1:-1]],
                "slope": self.slope}


SITES = ("gaussian", "poisson", "laplace", "logistic", "probit", "student_t", "ordinal")


def make_site(name: str, num_nodes: int = 20, **params) -> Site:
    if name == "gaussian":
        return GaussianSite(params.get("noise_var", 1.0))
    if name == "poisson":
        return PoissonSite()
    if name == "laplace":
        return LaplaceSite(params.get("scale", 1.0))
    if name == "logistic":
        return LogisticSite(num_nodes)
    if name == "probit":
        return ProbitSite(num_nodes)
    if name == "student_t":
        return StudentTSite(num_nodes)
    if name == "ordinal":
        return OrdinalSite(params["thresholds"], params.get("slope", 1.0), num_nodes)
    raise ConfigError(f"unknown lgm.likelihood {name!r}; valid choices: {', '.join(SITES)}")
