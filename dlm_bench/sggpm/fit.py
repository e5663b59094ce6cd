"""One method on one training set (upstream eval_method_*.m): hyperparameters from the active set (init_hyps),
Laplace on the active set as every method's start, then the method. CPU time covers init + training."""

from __future__ import annotations

import time

from ..errors import ConfigError
from ..papers.sggpm import METHODS
from .dual import fit_dual, init_lambda
from .laplace import init_from_laplace, laplace
from .model import Hyp, init_hyps, make_site, sod_model, sparse_model
from .hyperparameter_learning import h_block, learn_laplace
from .optim import Fit, train


def split_method(method: str) -> tuple[str, str]:
    if method not in METHODS:
        raise ConfigError(f"unknown sggpm method {method!r}; valid choices: {', '.join(METHODS)}")
    alg, kind = method.rsplit("_", 1)
    return alg, kind


def fit_method(method: str, task: str, X, y, M: int, hyp: Hyp | None = None, levels: int | None = None,
               upstream_mean_double_log: bool = True, num_nodes: int = 20, max_outer: int = 100,
               learn_hyperparameters: bool = False, hyp_rounds: int = 20, dual_upper_bound: bool = True):
    """X, y: z-scored training rows whose last M rows are the active set. Returns (model, Fit, hyp).
    learn_hyperparameters: hyp.py (L-BFGS on the VLB's log-hyperparameters alternated with the method; Laplace: on
    its approximate log marginal likelihood); CPU time then covers the whole alternation."""
    alg, kind = split_method(method)
    c0 = time.process_time()
    Z, yZ = X[-M:], y[-M:]
    if hyp is None:
        hyp = init_hyps(task, Z, yZ.numpy(), levels, upstream_mean_double_log)
    site = make_site(task, hyp, num_nodes)
    sod = sod_model(Z, yZ, site, hyp)
    model = sod if kind == "sod" else sparse_model(X, y, Z, site, hyp)
    if learn_hyperparameters and alg == "laplace":
        hyp, _, nit = learn_laplace(task, hyp, site, Z, yZ)
        model = sod = sod_model(Z, yZ, site, hyp)
    if alg == "laplace":
        f, cov, logq = laplace(sod)
        fit = Fit(f, cov, -logq, sod.vlb(f, cov), 0, True, "newton_mode", extra={"log_marginal": logq})
    elif alg == "dual":
        f_la = laplace(sod)[0] if kind == "sod" else None
        fit = fit_dual(model, init_lambda(model, f_la), upper_bound=dual_upper_bound)
    else:
        m0, cov0 = init_from_laplace(sod)
        fit = train(model, alg, m0, cov0, max_outer=max_outer)
    if learn_hyperparameters and alg != "laplace":
        Xh, yh = (Z, yZ) if kind == "sod" else (X, y)
        prev, rounds = -fit.vlb, 0
        for rounds in range(1, hyp_rounds + 1):
            hyp, _, _ = h_block(task, hyp, site, Xh, yh, Z, fit.m, fit.cov, kind)
            sod = sod_model(Z, yZ, site, hyp)
            model = sod if kind == "sod" else sparse_model(X, y, Z, site, hyp)
            if alg == "dual":
                fit = fit_dual(model, init_lambda(model, laplace(sod)[0] if kind == "sod" else None),
                               upper_bound=dual_upper_bound)
            else:
                fit = train(model, alg, fit.m, fit.cov, max_outer=max_outer)
            if abs(-fit.vlb - prev) <= 1e-6 * (1 + abs(prev)):
                break
            prev = -fit.vlb
        fit.extra["hyp_rounds"] = rounds
    fit.cpu_s = time.process_time() - c0
    return model, fit, hyp
