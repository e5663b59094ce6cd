"""Site expectations of the extended LGM (Sheth & Khardon 2016, eqs. 5-7).

For q(f_i) = N(m_i, v_i), `site_expectations(y, m, v)` returns per point
    E_i   = E_q[log phi_i(f_i)]            (every constant included, e.g. -log y! for counts)
    rho_i = dE_i/dm_i
    lam_i = 2 dE_i/dv_i  (= E_q[d^2 log phi_i / df^2] by Stein's lemma),   gamma_i = -lam_i  (eq. 6)
Gaussian, Poisson (log link) and Laplace are closed form (spec 1.6); Poisson's is the likelihood layer's
(`PoissonExpLikelihood.exact_expected_log_prob_and_derivatives`), and so is the Gaussian E
(likelihoods/gaussian.py `gaussian_expected_log_prob`). Logistic, probit and Student-t are thin
adapters over the likelihood layer's objects (dlm_bench/likelihoods: the same log p, derivatives and
features; labels -1/+1 mapped to 0/1), and they and the ordinal site integrate with the one adaptive rule of
likelihoods/quadrature/ (`expected_log_prob_and_derivatives`: E, dE/dm, dE/dv by the composite rule applied to
the exact derivatives of the integrand, accurate to ~1e-9 for v / width^2 from 1e-4 to 1e4, issue 26).
`num_nodes` (lgm.quadrature_nodes) no longer changes the rule; it is kept in `params()` for old configs.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn.functional import logsigmoid

from ..errors import ConfigError
from ..likelihoods import LogisticLikelihood, PoissonExpLikelihood, ProbitLikelihood, StudentTLikelihood
from ..likelihoods import quadrature as quad
from ..likelihoods.gaussian import gaussian_expected_log_prob


class Site:
    """One likelihood family; `clip_gamma` says whether the FP operator must clip gamma at 0 (Student-t)."""

    name = ""
    clip_gamma = False
    log_concave = True

    def site_expectations(self, y, m, v):  # pragma: no cover - abstract
        raise TypeError

    def point_terms(self, y, f):
        """log phi, d/df and d^2/df^2 at f (what the Laplace approximation needs): the closed-form expectations at
        a vanishing variance, exact in the limit (Poisson, Gaussian)."""
        return self.site_expectations(y, f, torch.full_like(f, 1e-10))

    def params(self) -> dict:
        return {}


class GaussianSite(Site):
    """N(y | f, s2): E from the likelihood layer (the same numbers, bit for bit, as the expression written here
    before: -(log 2 pi s2)/2 - (r^2 + v)/(2 s2)); rho = r / s2 and lam = -1/s2 are this site's (the layer's
    Gaussian is GPyTorch's, without the site derivatives)."""

    name = "gaussian"

    def __init__(self, noise_var: float = 1.0):
        self.s2 = float(noise_var)

    def site_expectations(self, y, m, v):
        r = y - m
        E = gaussian_expected_log_prob(y, m, v, self.s2, log_noise=math.log(self.s2))
        return E, r / self.s2, torch.full_like(m, -1.0 / self.s2)

    def params(self):
        return {"noise_var": self.s2}


class PoissonSite(Site):
    """log link: E = y m - exp(m + v/2) - log y!  (Remark 1: gamma = exp(m + v/2), Conditions 1 + 2a)."""

    name = "poisson"

    def site_expectations(self, y, m, v):
        E, dm, dv = PoissonExpLikelihood().exact_expected_log_prob_and_derivatives(y, m, v)
        return E, dm, 2 * dv

    def log_predictive(self, y, mu, var):
        """log int Poisson(y | e^f) N(f|mu, var) df: the likelihood layer's rule for the same likelihood."""
        return PoissonExpLikelihood().double().quadrature_log_marginal(y, mu, var)


class LaplaceSite(Site):
    """p(y|f) = exp(-|y - f| / b) / (2 b); closed forms of spec 1.6 (util/exp_log_laplace.m).

    Not built on the likelihood layer: the layer has no Laplace likelihood (no DLM-paper task uses one; the FP
    paper's real-valued runs are its only user), and E, rho, lam have closed forms that need no rule."""

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
    """E, rho, lam by the adaptive rule (likelihoods/quadrature/): E = E_q[log phi], rho = dE/dm,
    lam = 2 dE/dv. Subclasses give log phi, its derivatives and its features."""

    def __init__(self, num_nodes: int = 20):
        if num_nodes < 2:
            raise ConfigError(f"lgm.quadrature_nodes must be >= 2, got {num_nodes}")
        self.num_nodes = num_nodes

    def log_phi(self, y, f):  # pragma: no cover - abstract
        raise TypeError

    def derivs(self, y, f):
        return quad.autograd_derivs(self.log_phi)(y, f)

    def features(self, y):
        return []

    def site_expectations(self, y, m, v):
        E, dm, dv = quad.expected_log_prob_and_derivatives(self.log_phi, y, m, v, self.features(y), self.derivs)
        return E, dm, 2 * dv

    def log_predictive(self, y, mu, var):
        """log int phi(y|f) N(f|mu, var) df (SGGPM's p(y | x)): the one adaptive rule, with this site's features."""
        return quad.log_marginal(self.log_phi, y, mu, var, self.features(y), self.derivs,
                                 laplace_hermite=self.log_concave)

    def point_terms(self, y, f):
        """log phi and its derivatives at f directly. (Until 2026-11-25 the Laplace approximation took them from the
        expectations at v = 1e-10, where the variance derivative was a cancellation: logistic d^2 off by up to 57.)"""
        g, h = self.derivs(y, f)
        return self.log_phi(y, f), g, h

    def params(self):
        return {"quadrature_nodes": self.num_nodes}


class _LayerSite(QuadratureSite):
    """A site over a likelihood of the layer (dlm_bench/likelihoods); `_label` maps the site's y to the
    likelihood's (binary: -1/+1 -> 0/1)."""

    likelihood = None

    @staticmethod
    def _label(y):
        return y

    def log_phi(self, y, f):
        return self.likelihood.log_prob_f(self._label(y), f)

    def derivs(self, y, f):
        return self.likelihood.log_prob_f_derivs(self._label(y), f)

    def features(self, y):
        return self.likelihood.features(self._label(y))


class LogisticSite(_LayerSite):
    """sigma(y f), y in {-1, +1} (a 0/1 label is mapped to -1/+1): LogisticLikelihood with label (y + 1)/2."""

    name = "logistic"

    def __init__(self, num_nodes: int = 20):
        super().__init__(num_nodes)
        self.likelihood = LogisticLikelihood().double()

    @staticmethod
    def _label(y):
        return (y + 1) / 2


class ProbitSite(LogisticSite):
    name = "probit"

    def __init__(self, num_nodes: int = 20):
        QuadratureSite.__init__(self, num_nodes)
        self.likelihood = ProbitLikelihood().double()


class StudentTSite(_LayerSite):
    """Student-t, nu = 3, sigma^2 = 1/3 (paper L197): not log-concave, gamma can be < 0 and is clipped
    at 0 in the FP operator (paper L155, L179). StudentTLikelihood(df) with its squared scale fixed."""

    name = "student_t"
    clip_gamma = True
    log_concave = False

    def __init__(self, num_nodes: int = 20, df: float = 3.0, scale2: float = 1.0 / 3.0):
        super().__init__(num_nodes)
        self.df, self.s2 = float(df), float(scale2)
        self.likelihood = StudentTLikelihood(df=self.df).double().requires_grad_(False)
        self.likelihood.noise = self.s2

    def params(self):
        return {"quadrature_nodes": self.num_nodes, "df": self.df, "scale2": self.s2}


class OrdinalSite(QuadratureSite):
    """Cumulative logit: p(y = k | f) = sigma(s (theta_k - f)) - sigma(s (theta_{k-1} - f)), k = 1..K,
    theta_0 = -inf, theta_K = +inf; `thresholds` theta_1 < ... < theta_{K-1}, slope s. Computed in log space:
    log[sigma(b) - sigma(a)] = log sigma(b) + log sigma(-a) + log(1 - exp(a - b)).

    The likelihood is written here, its integration is the layer's (likelihoods/quadrature, with the thresholds
    as features): the layer has no ordinal likelihood, because its likelihoods serve the DLM paper's tasks
    (likelihoods.TASK_LIKELIHOODS: regression, binary, count), and this one's thresholds and slope are SGGPM
    hyperparameters (sggpm/model.py `ordinal_thresholds`), plain numbers that a new site carries each time the
    hyperparameter search moves them, not a GPyTorch module's parameters."""

    name = "ordinal"

    def __init__(self, thresholds, slope: float = 1.0, num_nodes: int = 100):
        super().__init__(num_nodes)
        self._features_cache = None
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
        # sigma(b) - sigma(a) = sigma(b) sigma(-a) (1 - exp(a - b)); infinite ends give log sigma = 0.
        # a - b = s (theta_{k-1} - theta_k) does not depend on f: its term is computed once per y, not per node
        k = y.long()
        th = self.theta.to(f)
        const = torch.log(-torch.expm1(self.slope * (th[k - 1] - th[k])))
        return logsigmoid(b) + logsigmoid(-a) + const

    def derivs(self, y, f):
        a, b = self._ab(y, f)
        s = self.slope
        # d/df log p = s [sigma(a) + sigma(b) - 1]   (da/df = db/df = -s; the last log term is constant in f)
        return (s * (torch.sigmoid(a) + torch.sigmoid(b) - 1.0),
                -s * s * (torch.sigmoid(a) * torch.sigmoid(-a) + torch.sigmoid(b) * torch.sigmoid(-b)))

    def features(self, y):
        """The two thresholds bounding class y, each a transition of width 1/slope."""
        a, b = self._ab(y, torch.zeros_like(y))  # s theta_{k-1}, s theta_k (at f = 0)
        w = torch.full_like(y, 1.0 / self.slope)
        # theta_{k-1}, theta_k (+-inf: ignored). Until 2026-11-25 these were -theta: right only for a class whose
        # thresholds are symmetric about 0; elsewhere the kinks were resolved by q's panels alone (errors up to
        # 2e-4 at slope 50, tests/unit/lgm/test_fp_core.py test_ordinal_site_batch_of_mixed_widths_vs_scipy)
        return [(a / self.slope, w), (b / self.slope, w)]

    def params(self):
        return {"quadrature_nodes": self.num_nodes, "thresholds": [float(t) for t in self.theta[1:-1]],
                "slope": self.slope}


_MAKERS = {  # name -> (num_nodes, params) -> Site
    "gaussian": lambda n, p: GaussianSite(p.get("noise_var", 1.0)),
    "poisson": lambda n, p: PoissonSite(),
    "laplace": lambda n, p: LaplaceSite(p.get("scale", 1.0)),
    "logistic": lambda n, p: LogisticSite(n),
    "probit": lambda n, p: ProbitSite(n),
    "student_t": lambda n, p: StudentTSite(n),
    "ordinal": lambda n, p: OrdinalSite(p["thresholds"], p.get("slope", 1.0), n),
}
SITES = tuple(_MAKERS)


def make_site(name: str, num_nodes: int = 20, **params) -> Site:
    if name not in _MAKERS:
        raise ConfigError(f"unknown lgm.likelihood {name!r}; valid choices: {', '.join(SITES)}")
    return _MAKERS[name](num_nodes, params)
