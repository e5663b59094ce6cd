"""Sparse and subset-of-data (SoD) variational GGPMs (Sheth, Wang & Khardon, ICML 2015) on the LGM core.

q(f_X, f_U) = p(f_X | f_U) N(f_U | m, V) (eq. 1). In the LGM notation (dlm_bench/gpmath/lgm.py) the prior is
N(m_U, K_M) on the M active-set values and the marginals (eqs. 3a-b) are
    sparse:  m_qi = m_X(x_i) + k_iM K_M^-1 (m - m_U),  v_qi = K_ii - k_iM K_M^-1 k_Mi + d_i^T V d_i,
             d_i = K_M^-1 k_Mi, i.e. a_i = m_X(x_i) - d_i^T m_U, c_i = K_ii - k_iM K_M^-1 k_Mi
    SoD:     the same GP on the active rows only: d_i = e_i, a = c = 0.
K_M carries upstream's absolute jitter 1e-7 (compute_model.m); c_i is not clamped (upstream does not clamp it).
Mean function: constant for counts, zero otherwise (paper L202).

Hyperparameters follow upstream's (GPML) parametrisation: hyp.cov = [log ell, log sf] (covSEiso), the constant
mean, and for the ordinal likelihood hyp.lik = [phi_1, log(phi_2 - phi_1), ..., log k_o].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..errors import ConfigError
from ..gpmath.cholesky import CholeskyPolicy
from ..gpmath.kernels import matern12, poly2, poly2_diag, rbf, sq_dist
from ..gpmath.lgm import LGM, tri
from ..gpmath.sites import LogisticSite, OrdinalSite, PoissonSite, Site

JITTER = 1e-7  # compute_model.m: K_M + keps I, keps = 1e-7
# covSEiso, covMaterniso(1) and a degree-2 polynomial kernel (the supplement's Fig. 1 kernels; gpmath/kernels.py)
_KERNELS = {"se": rbf, "matern12": matern12, "poly2": poly2}
KERNELS = tuple(_KERNELS)


def kernel(name: str, X1, X2, ell, sf2):
    if name not in _KERNELS:
        raise ConfigError(f"unknown sggpm kernel {name!r}; valid choices: {', '.join(KERNELS)}")
    return _KERNELS[name](X1, X2, ell, sf2)


def kernel_diag(name: str, X, ell, sf2):
    """diag K(X, X); differentiable in ell and sf2 when they are tensors (hyperparameter_learning.py)."""
    if name == "poly2":
        return poly2_diag(X, ell, sf2)
    return torch.ones(X.shape[0], dtype=X.dtype) * sf2


def conditional(name: str, X, Z, L, ell, sf2):
    """(D, c) of eqs. 3a-b with K_M = L L^T: rows d_i^T = k_iM K_M^-1 and c_i = K_ii - k_iM K_M^-1 k_Mi."""
    K_NM = kernel(name, X, Z, ell, sf2)
    A = tri(L, K_NM.T, upper=False)
    return torch.cholesky_solve(K_NM.T, L).T, kernel_diag(name, X, ell, sf2) - (A * A).sum(0)


@dataclass
class Hyp:
    """ell, sf2 (= sf^2), the constant mean (0 for binary / ordinal), the ordinal hyp.lik vector."""

    ell: float
    sf2: float
    mean: float = 0.0
    lik: list = field(default_factory=list)
    kernel: str = "se"

    def as_dict(self) -> dict:
        return {"lengthscale": self.ell, "outputscale": self.sf2, "mean_const": self.mean,
                "lik": [float(v) for v in self.lik], "kernel": self.kernel}


def ordinal_thresholds(lik) -> tuple[np.ndarray, float]:
    """hyp.lik = [phi_1; log gaps; log slope] -> (phi_1..phi_{L-1}, k_o)."""
    lik = np.asarray(lik, float)
    phi = np.cumsum(np.concatenate([lik[:1], np.exp(lik[1:-1])]))
    return phi, float(np.exp(lik[-1]))


def make_site(task: str, hyp: Hyp, num_nodes: int = 20) -> Site:
    if task == "count":
        return PoissonSite()
    if task == "binary":
        return LogisticSite(num_nodes)
    if task == "ordinal":
        phi, k = ordinal_thresholds(hyp.lik)
        return OrdinalSite(phi, k, num_nodes)
    raise ConfigError(f"sggpm handles count, binary and ordinal tasks, not {task!r}")


def max_half_distance(X) -> float:
    el = float(torch.sqrt(sq_dist(X, X).max())) / 2
    return el if el else 1.0


def init_hyps(task: str, X, y, levels: int | None = None, upstream_mean_double_log: bool = True) -> Hyp:
    """Upstream's util/init_hyps.m on the active set (X z-scored with the training statistics):
    count: ell = max distance / 2, sf2 = log((v_y - m_y)/m_y^2 + 1) (1 if v_y <= m_y), mean = log m_y - sf2/2
      (1 if <= 0), and upstream stores hyp.mean = log(mean): the double log, kept when upstream_mean_double_log;
    binary: ell = max distance / 2, sf2 = 1, zero mean;
    ordinal: phi_1 = -1, L-2 gaps of 2/(L-2), slope 50, ell = max distance / 2, sf = std(phi)."""
    yy = np.asarray(y, float)
    el = max_half_distance(X)
    if task == "count":
        my, vy = yy.mean(), yy.var(ddof=1)
        sf2 = 1.0 if (my <= 0 or vy <= my) else math.log((vy - my) / my**2 + 1)
        mn = 1.0 if my == 0 else math.log(my) - 0.5 * sf2
        if mn <= 0:
            mn = 1.0
        return Hyp(el, sf2, math.log(mn) if upstream_mean_double_log else mn)
    if task == "binary":
        return Hyp(el, 1.0, 0.0)
    if task == "ordinal":
        L = int(levels if levels is not None else yy.max())
        if L < 3:
            raise ConfigError(f"ordinal likelihood needs >= 3 levels, got {L}")
        lik = [-1.0] + [math.log(2.0 / (L - 2))] * (L - 2) + [math.log(50.0)]
        phi, _ = ordinal_thresholds(lik)
        return Hyp(el, float(np.std(phi, ddof=1)) ** 2, 0.0, lik)
    raise ConfigError(f"sggpm handles count, binary and ordinal tasks, not {task!r}")


class GGPM(LGM):
    """An LGM whose prior is the GP on the active set; keeps what prediction needs."""

    def __init__(self, y, site, hyp: Hyp, Z, L_M, D, a, c, kind):
        M = Z.shape[0]
        super().__init__(y, site, torch.full((M,), float(hyp.mean), dtype=Z.dtype), L_M, D=D, a=a, c=c, kind=kind)
        self.hyp, self.Z, self.L_M = hyp, Z, L_M

    def predict_latent(self, Xs, m, cov):
        """q(f_*) = N(m_* + k_*M K_M^-1 (m - m_U), K_** - k_*M K_M^-1 k_M* + d_*^T V d_*), any model kind."""
        h = self.hyp
        Ds, cs = conditional(h.kernel, Xs, self.Z, self.L_M, h.ell, h.sf2)
        mean = h.mean + Ds @ (m - self.mu)
        WD = cov.W @ Ds.T
        var = cs + (WD * WD).sum(0)
        return mean, var.clamp_min(1e-12)


def chol_KM(hyp: Hyp, Z, jitter: float = JITTER):
    """L of K_M + jitter I, no retry (upstream adds its 1e-7 once)."""
    return CholeskyPolicy(jitter).factor(kernel(hyp.kernel, Z, Z, hyp.ell, hyp.sf2))


def sparse_model(X, y, Z, site, hyp: Hyp, jitter: float = JITTER) -> GGPM:
    L = chol_KM(hyp, Z, jitter)
    D, c = conditional(hyp.kernel, X, Z, L, hyp.ell, hyp.sf2)
    a = hyp.mean - D @ torch.full((Z.shape[0],), float(hyp.mean), dtype=X.dtype)
    return GGPM(y, site, hyp, Z, L, D, a, c, "sparse")


def sod_model(Z, yZ, site, hyp: Hyp, jitter: float = JITTER) -> GGPM:
    L = chol_KM(hyp, Z, jitter)
    z = torch.zeros(Z.shape[0], dtype=Z.dtype)
    return GGPM(yZ, site, hyp, Z, L, None, z, z.clone(), "sod")
