"""`dlm-bench run model=lgm_glm|lgm_gp|lgm_sparse lgm.optimizer=grad|fpb|fpi|fpi_mean`: one VLB optimisation
(Sheth & Khardon 2016, sec. 4). All rows of the dataset (optionally a random subsample), features z-scored,
regression targets z-scored, zero prior mean; hyperparameters estimated once and frozen (frozen_hyperparameters.py).

What the run harness calls (dlm_bench/run/harness.py): `check_config` (before any data), `check_data` (the
dataset's task against lgm.likelihood) and `execute(cfg, ctx) -> Outcome`; nothing here writes files."""

from __future__ import annotations

import math

import numpy as np
import torch
from omegaconf import DictConfig

from ..config.schema import check_domains
from ..errors import ConfigError
from ..results.outcome import Outcome
from . import frozen_hyperparameters as hyper
from ..gpmath.lgm import full_gp, glm, sparse_gp
from .optim import StopRule, optimise
from ..gpmath.sites import SITES, make_site

KIND = {"lgm_glm": "glm", "lgm_gp": "gp", "lgm_sparse": "sparse_gp"}
PRIOR_VAR = {"flares": 0.001}  # GLM prior variance, paper L197 (0.1 otherwise)
DEFAULT_LIKELIHOOD = {"regression": "gaussian", "count": "poisson", "binary": "logistic"}


def _zscore(A):
    sd = A.std(0)
    sd[sd == 0] = 1.0  # constant columns are only centred
    return (A - A.mean(0)) / sd


LIKELIHOODS = tuple(s for s in SITES if s != "ordinal")  # ordinal needs thresholds: the sparse-GGPM issue wires it in


def check_config(cfg: DictConfig) -> None:
    """lgm.* settings in their domains, before any data is loaded: the ranges and choices declared with the
    section's fields (papers/fp.py LgmConfig, checked by config.schema.check_domains), then lgm.likelihood against
    the LGM sites (gpmath/sites.py)."""
    check_domains(cfg, ("lgm",))
    c = cfg.lgm
    if c.likelihood is not None and c.likelihood not in LIKELIHOODS:
        raise ConfigError(f"lgm.likelihood must be one of {', '.join(LIKELIHOODS)}, got {c.likelihood!r}")


def check_lgm(cfg: DictConfig, task: str) -> str:
    """The likelihood this run uses, checked against the dataset's task (after check_config)."""
    check_config(cfg)
    c = cfg.lgm
    lik = c.likelihood or (c.real_likelihood if task == "regression" else DEFAULT_LIKELIHOOD.get(task))
    if lik is None:
        raise ConfigError(f"dataset {cfg.dataset.name!r} is a {task} task; set lgm.likelihood "
                          f"({', '.join(SITES)})")
    if lik in ("logistic", "probit") and task != "binary" or lik == "poisson" and task != "count" \
            or lik in hyper.REAL_LIKELIHOODS and task != "regression":
        raise ConfigError(f"lgm.likelihood={lik} does not fit dataset {cfg.dataset.name!r} ({task} task)")
    return lik


def check_data(cfg: DictConfig, ds) -> None:
    check_lgm(cfg, ds.task)
    if cfg.model.name == "lgm_sparse":  # M was cut to the rows in use without a word
        N = ds.X.shape[0]
        rows = min(cfg.lgm.subsample, N) if cfg.lgm.subsample else N
        if cfg.lgm.num_inducing > rows:
            raise ConfigError(f"lgm.num_inducing={cfg.lgm.num_inducing} is larger than the {rows} rows in use "
                              f"(dataset {ds.name!r}{', lgm.subsample' if rows < N else ''}); set lgm.num_inducing <= {rows}")


def prepare(cfg: DictConfig, ds):
    lik = check_lgm(cfg, ds.task)
    rng = np.random.default_rng(cfg.seed)
    N = ds.X.shape[0]
    idx = np.sort(rng.choice(N, cfg.lgm.subsample, replace=False)) if cfg.lgm.subsample and cfg.lgm.subsample < N \
        else np.arange(N)
    X = torch.as_tensor(_zscore(np.asarray(ds.X[idx], float)), dtype=torch.float64)
    y = np.asarray(ds.y[idx], float).reshape(-1)
    if ds.task == "regression":
        y = (y - y.mean()) / y.std()
    elif ds.task == "binary":
        y = np.where(y > 0, 1.0, -1.0)  # sigma(y f) with y in {-1, +1}
    return lik, X, torch.as_tensor(y, dtype=torch.float64), rng


def load_and_prepare(cfg: DictConfig):
    """prepare() on the configured dataset, loaded here (scripts that build the model outside a run: fpdiag.py)."""
    from .. import data

    ds = data.load_from_config(cfg.dataset)
    return (ds, *prepare(cfg, ds))


def build(cfg: DictConfig, lik: str, X, y, rng):
    """The model with hyperparameters estimated on lgm.hyper_points random points (then frozen)."""
    c = cfg.lgm
    kind = KIND[cfg.model.name]
    prior_var = float(c.prior_var if c.prior_var is not None else PRIOR_VAR.get(cfg.dataset.name, 0.1))
    h_idx = rng.choice(X.shape[0], min(c.hyper_points, X.shape[0]), replace=False)
    site0 = make_site(lik)
    hyp = hyper.estimate(kind, lik, X[h_idx], y[h_idx], site0, prior_var)
    for key in ("lengthscale", "outputscale"):  # fixed by the user instead of estimated
        if kind != "glm" and c.get(key) is not None:
            hyp[key] = float(c[key])
    site = make_site(lik, noise_var=hyp.get("noise_var", 1.0), scale=hyp.get("laplace_scale", 1.0))
    if kind == "glm":
        model = glm(X, y, site, prior_var)
    elif kind == "gp":
        model = full_gp(X, y, site, hyp["lengthscale"], hyp["outputscale"], c.jitter)
    else:
        M = min(c.num_inducing, X.shape[0])
        Z = X[np.sort(rng.choice(X.shape[0], M, replace=False))]  # random fixed inducing inputs
        model = sparse_gp(X, Z, y, site, hyp["lengthscale"], hyp["outputscale"], c.jitter)
    hyp.update(site.params())
    return model, hyp


def execute(cfg: DictConfig, ctx) -> Outcome:
    """One VLB optimisation on ctx.dataset (seeded by the harness); fills and returns ctx.outcome."""
    out = ctx.outcome
    ds = ctx.dataset
    lik, X, y, rng = prepare(cfg, ds)
    c = cfg.lgm
    out.task, out.likelihood, out.train_size = ds.task, lik, int(X.shape[0])
    out.objective, out.hyperparameters = "vlb", "fixed"
    out.estimator = "closed_form" if lik in ("gaussian", "poisson", "laplace") else "adaptive_quadrature"
    out.split = "fp_all" if not c.subsample else f"fp_subsample{c.subsample}"
    model, hyp = build(cfg, lik, X, y, rng)
    out.num_inducing = model.n if model.kind == "sparse_gp" else None
    ctx.apply_threads(model.n if model.kind != "glm" else X.shape[0], model.n, None)
    v0 = c.init_var if c.init_var is not None else (0.1 if lik == "poisson" else 1.0)  # paper L199
    m0, L0 = torch.zeros(model.n, dtype=torch.float64), math.sqrt(v0) * torch.eye(model.n, dtype=torch.float64)
    stop = StopRule(c.grad_tol, c.f_tol, c.max_iters)
    ctx.begin_training()
    res = optimise(model, c.optimizer, m0, L0, stop)
    out.status = "ok" if np.isfinite(res.vlb) else "diverged"
    out.metrics = {"vlb": res.vlb, "neg_vlb": -res.vlb, **{f"hyp_{k}": float(v) for k, v in hyp.items()
                                                            if isinstance(v, (int, float))}}
    out.train = {"iterations": res.iterations, "epochs": 0, "converged": res.converged, "stop_reason": res.reason,
                 "cpu_s": res.cpu_s, "wall_s": res.wall_s, "final_loss": -res.vlb, "fpb_two_cycles": res.cycles,
                 "frozen_hyperparameters": hyp, "init_var": v0}
    out.curve = res.trace
    return out
