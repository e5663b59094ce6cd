"""`dlm-bench run model=sggpm sggpm.method=<method> sggpm.size_index=<i>`: one method at one active-set size, on every
fold of upstream's protocol (protocol.py). Sparse methods train per fold; SoD methods (incl. Laplace-SoD) train
once per size on the active rows with fold-1 statistics and are tested on every fold (upstream sod_exp_*.m).
run.json metrics: mfe (counts) or mze (binary, ordinal), mnlpd, their standard errors over folds, the CPU training
time (init + training, mean over trained fits), -VLB; curve.csv: one row per fold.

What the run harness calls (dlm_bench/run/harness.py): `check_config`, `check_data` and `execute(cfg, ctx)`."""

from __future__ import annotations

import math
import time

import numpy as np
import torch
from omegaconf import DictConfig

from ..config.schema import check_domains
from ..errors import ConfigError, NotApplicable
from ..results.outcome import Outcome
from ..training.checkpoint import CHECKPOINT, Checkpoint
from ..util import interrupts
from ..util.logline import Heartbeat
from .fit import fit_method, split_method
from .metrics import metrics
from .protocol import Fold, iss, nested_protocol, published_ucsdpeds_splits, split_rest, zscore_stats

TASKS = ("count", "binary", "ordinal")


def _targets(task, y):
    y = np.asarray(y, float).reshape(-1)
    if task == "binary":
        return np.where(y > 0, 1.0, -1.0)
    if task == "ordinal":
        levels = np.unique(y)
        return np.searchsorted(levels, y).astype(float) + 1.0  # classes 1..L
    return y


def folds_for(cfg: DictConfig, ds, N: int, M: int, sizes) -> list[Fold]:
    c = cfg.sggpm
    if c.published_splits:
        if ds.name != "ucsdpeds1l":
            raise ConfigError(f"sggpm.published_splits exists for ucsdpeds1l only, not {ds.name!r}")
        order, folds = published_ucsdpeds_splits()  # the mirror: $DLM_BENCH_MIRROR
        if M == len(order):
            return folds
        if M > len(order):
            raise ConfigError(f"published splits hold an active-set order of {len(order)} rows, not M = {M}")
        # the stored files pin the order, not the folds of smaller M: split the rest like the protocol does
        return split_rest(N, order[:M], np.random.default_rng(c.perm_seed), c.folds)
    _, folds = nested_protocol(N, sizes, c.perm_seed, c.folds)
    return folds[M]


def check_config(cfg: DictConfig) -> None:
    """sggpm.* settings in their domains, before any data is loaded: the ranges and choices declared with the
    section's fields (papers/sggpm.py SggpmConfig, checked by config.schema.check_domains); what depends on the
    dataset is check_point's."""
    check_domains(cfg, ("sggpm",))


def fit_size(config: dict) -> int | None:
    """The active-set size M of a resolved config (the registry's row count N, no data loaded): for the sweep's
    estimate from finished runs at other sizes (sweeps/size_scaling.py). None: unknown (a csv dataset)."""
    from ..data import get_spec

    c = config["sggpm"]
    try:
        sizes = iss(get_spec(config["dataset"]["name"]).shape[0], c["num_sizes"])
    except Exception:  # a dataset the registry cannot size without its file
        return None
    return sizes[c["size_index"]] if 0 <= c["size_index"] < len(sizes) else None


def check_data(cfg: DictConfig, ds) -> None:
    check_point(cfg.sggpm, ds.name, ds.task, ds.X.shape[0])


def check_point(c, name: str, task: str, N: int):
    """The checks one grid point passes before any data is split or trained (sggpm section c, dataset name, task and
    row count N): ConfigError / NotApplicable, else (alg, kind, sizes, M)."""
    alg, kind = split_method(c.method)
    if task not in TASKS:
        raise ConfigError(f"model=sggpm needs a count, binary or ordinal dataset; {name!r} is {task}")
    if alg == "dual" and task == "ordinal":
        raise NotApplicable("sggpm: the dual method has no ordinal version (paper L185)")
    sizes = iss(N, c.num_sizes)
    if not 0 <= c.size_index < len(sizes):
        raise ConfigError(f"sggpm.size_index must be in [0, {len(sizes) - 1}], got {c.size_index}")
    M = sizes[c.size_index]
    if "folds" in c and not c.published_splits and c.folds > N - M:
        raise ConfigError(f"sggpm.folds={c.folds} is more than the {N - M} rows left for testing on dataset {name!r} "
                          f"(N={N}, active set M={M}); use at most {N - M}")
    if M < 2:  # ceil(N/100) = 1 for N <= 100: a one-point active set has no usable kernel statistics
        raise ConfigError(f"sggpm.size_index={c.size_index} gives an active set of {M} row(s) on this dataset "
                          f"(sizes {sizes}); use a larger size_index or a larger dataset")
    return alg, kind, sizes, M


def fold_checkpoint(cfg: DictConfig, run_dir, n_eval: int, identity: dict | None = None) -> Checkpoint | None:
    """The finished folds' rows, saved after each fold (training/checkpoint.py; None with
    trainer.checkpoint_every_s=0). Each fold's fit is deterministic and depends only on its own rows (an SoD model
    is refitted on fold 1's active set when a resumed run first needs it), so a run killed part-way resumes at its
    first unfinished fold and ends with the metrics of an uninterrupted run; only its wall and CPU times differ.
    Saved every fold, not every checkpoint_every_s: a fold is seconds to minutes of work and its rows a few bytes."""
    if not cfg.trainer.get("checkpoint_every_s"):
        return None
    return Checkpoint(run_dir / CHECKPOINT, cfg.trainer.checkpoint_every_s, identity={**(identity or {}), "sggpm_folds": n_eval})


def execute(cfg: DictConfig, ctx) -> Outcome:
    """Every fold of one method at one active-set size on ctx.dataset; fills and returns ctx.outcome."""
    out, c, ds = ctx.outcome, cfg.sggpm, ctx.dataset
    N = ds.X.shape[0]
    _, kind, sizes, M = check_point(c, ds.name, ds.task, N)
    out.task, out.num_inducing, out.objective = ds.task, M, "vlb"
    out.likelihood = {"count": "poisson", "binary": "logistic", "ordinal": "ordinal_cumlogit"}[ds.task]
    out.estimator = "closed_form" if ds.task == "count" else "adaptive_quadrature"
    out.hyperparameters = "joint" if c.learn_hyperparameters else "fixed"
    out.split = ("published" if c.published_splits else f"sggpm_perm{c.perm_seed}") + f"_M{M}"
    folds = folds_for(cfg, ds, N, M, sizes)
    n_eval = len(folds) if c.max_folds is None else min(c.max_folds, len(folds))
    ctx.apply_threads(N, M, None)
    ctx.begin_training()
    rows, hyp, wall = fit_folds(cfg, ctx, folds[:n_eval], kind, M)
    summarise(out, c, ds.task, M, rows, hyp, wall)
    return out


def fit_folds(cfg: DictConfig, ctx, folds: list[Fold], kind: str, M: int) -> tuple[list[dict], dict, float]:
    """Each fold's row (metrics on its test rows, CPU time, VLB), the last fit's hyperparameters and the wall time,
    resuming after the folds a checkpoint holds; an SoD model is fitted once, on fold 1's active set."""
    c, ds = cfg.sggpm, ctx.dataset
    X_all = np.asarray(ds.X, float)
    y_all = _targets(ds.task, ds.y)
    levels = int(y_all.max()) if ds.task == "ordinal" else None
    w0 = time.perf_counter()
    ckpt = fold_checkpoint(cfg, ctx.run_dir, len(folds), ctx.checkpoint_identity)
    saved = (ckpt.load() or {}) if ckpt is not None else {}
    rows, hyp, trained = list(saved.get("rows", [])), saved.get("hyperparameters"), None
    w0 -= saved.get("wall_s", 0.0)  # a resumed run's wall time counts the folds before the checkpoint
    beat = Heartbeat.for_progress(cfg.trainer.progress)
    with interrupts.whole_units():  # a stop (SIGTERM, the sweep's --time-limit) keeps the folds saved below
        for k in range(len(rows), len(folds)):
            f = folds[k]
            if trained is None or kind != "sod":
                tr = folds[0].train if kind == "sod" else f.train
                mu, sd = zscore_stats(X_all[tr])
                model, fit, h = fit_method(c.method, ds.task, torch.tensor((X_all[tr] - mu) / sd),
                                           torch.tensor(y_all[tr]), M, levels=levels,
                                           upstream_mean_double_log=c.upstream_mean_double_log,
                                           max_outer=c.max_outer, learn_hyperparameters=c.learn_hyperparameters,
                                           dual_upper_bound=c.dual_upper_bound)
                trained, hyp = (model, fit, mu, sd), h.as_dict()
            model, fit, mu, sd = trained
            mean, var = model.predict_latent(torch.tensor((X_all[f.test] - mu) / sd), fit.m, fit.cov)
            met = metrics(model.site, ds.task, torch.tensor(y_all[f.test]), mean, var)
            rows.append({"fold": k + 1, "cpu_s": fit.cpu_s, "objective": fit.objective, "neg_vlb": -fit.vlb,
                         "outer": fit.outer, "stop": fit.reason, "trained": kind == "sparse" or k == 0,
                         "n_train": int(len(f.train) if kind == "sparse" else M), "n_test": len(f.test), **met})
            ctx.outcome.curve = rows
            if ckpt is not None:
                ckpt.save({"rows": rows, "hyperparameters": hyp, "wall_s": time.perf_counter() - w0}, len(rows) / len(folds))
            if beat is not None:
                beat.tick(k + 1, len(folds), note=f" (SGGPM {c.method}, M = {M})", unit="fold")
    ctx.outcome.curve = rows
    return rows, hyp, time.perf_counter() - w0


def summarise(out: Outcome, c, task: str, M: int, rows: list[dict], hyp: dict, wall: float) -> None:
    """run.json's metrics (mean and SE over folds) and train block from the fold rows."""
    err = "mfe" if task == "count" else "mze"

    def mse(key, sel=None):
        v = np.array([r[key] for r in rows if sel is None or r[sel]], float)
        return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan")

    m_err, se_err = mse(err)
    m_nlpd, se_nlpd = mse("mnlpd")
    cpu, _ = mse("cpu_s", "trained")
    out.status = "ok" if math.isfinite(m_err) else "diverged"
    out.train_size = int(np.mean([r["n_train"] for r in rows]))
    out.metrics = {err: m_err, f"{err}_se": se_err, "mnlpd": m_nlpd, "mnlpd_se": se_nlpd, "cpu_s": cpu,
                   "set_size": M, "folds": len(rows), "neg_vlb": float(np.mean([r["neg_vlb"] for r in rows])),
                   "objective_value": float(np.mean([r["objective"] for r in rows]))}
    out.train = {"method": c.method, "cpu_s": cpu, "iterations": int(sum(r["outer"] for r in rows if r["trained"])),
                 "epochs": 0, "converged": all(r["stop"] != "max_outer" for r in rows), "wall_s": wall,
                 "final_loss": out.metrics["objective_value"], "upstream_mean_double_log": bool(c.upstream_mean_double_log),
                 "hyperparameters": hyp, "stop_reasons": sorted({r["stop"] for r in rows}),
                 "outer_iterations": [r["outer"] for r in rows], "device": "cpu", "dtype": "float64"}
