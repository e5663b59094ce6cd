"""Diagnostics of the FP update (Sheth & Khardon 2016): the marginals (m_qi, v_qi) and gamma_i fed to each FP update
(Fig. 1(b)(c): the pairs at the beginning of the 2nd FP update; supplement Fig. 2: gamma_i vs update number with m
fixed at m*), a 2-cycle detector, a generated logistic GLM problem and a model builder from a dataset name.
Used by scripts/fp_fig1.py and scripts/fp_supp2.py."""

from __future__ import annotations

import math
from dataclasses import asdict
from types import SimpleNamespace

import numpy as np
import torch

from ..gpmath.lgm import LGM, Cov, newton_step


def fp_trace(model: LGM, m0: torch.Tensor, cov0: Cov, updates: int, newton: bool = False) -> tuple[list[dict], Cov]:
    """Run `updates` FP updates V <- T(V) from (m0, V0) and record, for update k = 1..updates, what it is computed from:
    m, V (Cov), m_q, v_q and gamma (gamma_i = -lam_i at (m_qi, v_qi), clipped as in T). Record k therefore holds
    V = T^(k-1)(V0). newton=False: m stays at m0 (FPb's inner loop, supplement Fig. 2); newton=True: one damped Newton
    step on m before each update, exactly as optim.fit_fp('fpi'). Returns the records and T^updates(V0)."""
    m, cov = m0.clone(), cov0
    recs = []
    for k in range(1, updates + 1):
        if newton:
            m, _ = newton_step(model, m, cov, model.marginals(m, cov)[1])
        mq, vq = model.marginals(m, cov)
        g = model.gamma(model.site_expectations(mq, vq))
        recs.append({"k": k, "m": m.clone(), "cov": cov, "mq": mq, "vq": vq, "gamma": g})
        cov = model.fixed_point_update(g)
    return recs, cov


def two_cycle_mask(G, window: int = 3, ratio: float = 1e-3, min_gap: float = 1e-6) -> np.ndarray:
    """Points whose sequence gamma_i^t (G: updates x points, t = row) has settled into a 2-cycle: over the last
    `window` steps |gamma_t - gamma_{t-2}| <= ratio * |gamma_t - gamma_{t-1}| and |gamma_t - gamma_{t-1}| >= min_gap
    (relative to max(1, |gamma_t|)). A converging sequence (monotone, or oscillating with a factor well inside
    (-1, 0)) has |gamma_t - gamma_{t-2}| of the order of |gamma_t - gamma_{t-1}| and is not flagged."""
    G = np.asarray(G, float)
    if G.ndim == 1:
        G = G[:, None]
    if G.shape[0] < window + 2:
        raise ValueError(f"need at least {window + 2} updates, got {G.shape[0]}")
    ok = np.ones(G.shape[1], bool)
    for t in range(G.shape[0] - window, G.shape[0]):
        scale = np.maximum(1.0, np.abs(G[t]))
        alt = np.abs(G[t] - G[t - 1]) / scale
        same = np.abs(G[t] - G[t - 2]) / scale
        ok &= (alt >= min_gap) & (same <= ratio * alt)
    return ok


def synthetic_logistic(n: int, d: int, seed: int = 0, margin: float = 3.0, rare: float = 0.0, p_rare: float = 0.001):
    """A generated logistic GLM problem. Dense (epsilon-like) part: x ~ N(0, 1); a fraction `rare` of the d columns are
    instead binary with P(x = 1) = p_rare (wlan-like: an access point seen from a handful of rows; z-scored, such a
    column gives those rows a large ||x_i||, a poorly constrained direction and v_qi >> 2, where gamma grows with v
    and FP with m fixed 2-cycles). w ~ N(0, I), the latent x^T w rescaled to standard deviation `margin`,
    y ~ Bernoulli(sigma(x^T w)) in {0, 1}. Returns X (n x d), y, w."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    k = int(round(rare * d))
    if k:
        X[:, d - k:] = (rng.uniform(size=(n, k)) < p_rare).astype(float)
    w = rng.normal(size=d)
    f = X @ w
    f = f / f.std() * margin
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-f))).astype(float)
    return X, y, w


SYNTHETIC = {  # name -> synthetic_logistic keywords; "NAME:N:D" sets the size (default 2000 x 200)
    "synthetic_logistic": {},
    "synthetic_wlan": {"rare": 0.9, "margin": 5.0},
}


def synthetic_from_name(name: str, seed: int = 0):
    parts = name.split(":")
    n, d = (int(parts[1]), int(parts[2])) if len(parts) == 3 else (2000, 200)
    return synthetic_logistic(n, d, seed, **SYNTHETIC[parts[0]])


def model_from_dataset(name: str, kind: str = "lgm_glm", subsample=None, seed: int = 0, **lgm):
    """The model of `dlm-bench run dataset=NAME model=KIND lgm.subsample=...` (plugin.prepare + plugin.build: z-scored
    features, hyperparameters estimated on 200 random points and frozen), its V0 = init_var I variance and the
    hyperparameters. name="synthetic_logistic[:N:D]" / "synthetic_wlan[:N:D]": a generated problem (SYNTHETIC)."""
    from omegaconf import OmegaConf

    from ..papers.fp import LgmConfig
    from . import plugin as R

    c = OmegaConf.create({"dataset": {"name": name}, "model": {"name": kind}, "seed": seed,
                          "lgm": {**asdict(LgmConfig()), "subsample": subsample, **lgm}})
    if name.split(":")[0] in SYNTHETIC:  # prepared as a binary dataset's rows are
        X, y, _ = synthetic_from_name(name, seed)
        lik, Xt, yt, rng = R.prepare(c, SimpleNamespace(X=X, y=y, task="binary"))
    else:
        _, lik, Xt, yt, rng = R.load_and_prepare(c)
    model, hyp = R.build(c, lik, Xt, yt, rng)
    v0 = c.lgm.init_var if c.lgm.init_var is not None else (0.1 if lik == "poisson" else 1.0)
    return model, float(v0), hyp


def cov_scaled_identity(n: int, v0: float) -> Cov:
    return Cov.from_chol(math.sqrt(v0) * torch.eye(n, dtype=torch.float64))
