"""`dlm-bench run model=savigp ...`: data -> SAVIGP -> alternating fit -> SSE/NLPD or ER/NLP -> run.json.

Writes, besides run.json and curve.csv, points.csv: per-test-point values (sse, nlpd for regression; err, nlp for
classification) for the box plots of the supplement's Figs. 1-3.

What the run harness calls (dlm_bench/run/harness.py): `check_config`, `check_data` and `execute(cfg, ctx)`.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig

from ..config.schema import InducingInit, check_domains
from ..errors import ConfigError
from ..models.components import initial_inducing_points
from ..results.outcome import Outcome
from ..training.checkpoint import CHECKPOINT, Checkpoint
from ..util.logline import Heartbeat
from .block_optimizer import BLOCKS, fit
from .likelihoods import LIKELIHOODS, build_likelihood
from .model import LOG_UPPER, Savigp


def check_config(cfg: DictConfig) -> None:
    """savigp.* settings in their domains, before any data is loaded: the ranges and choices declared with the
    schema's fields (papers/savigp.py SavigpConfig, checked by config.schema.check_domains), then what depends on
    other values or registries (the likelihood classes, the blocks, cv_samples <= num_samples)."""
    s = cfg.savigp
    if s.likelihood not in LIKELIHOODS:
        raise ConfigError(f"unknown savigp.likelihood {s.likelihood!r}; valid choices: {', '.join(LIKELIHOODS)}")
    check_domains(cfg, ("savigp",))
    if not list(s.blocks):
        raise ConfigError("savigp.blocks must name at least one block to optimise (e.g. [mog, hyp, ll])")
    for b in s.blocks:
        if b not in BLOCKS:
            raise ConfigError(f"savigp.blocks: unknown block {b!r}; valid: {', '.join(BLOCKS)}")
    if s.cv_samples is not None and not 2 <= s.cv_samples <= s.num_samples:
        raise ConfigError(f"savigp.cv_samples must be an integer in [2, savigp.num_samples={s.num_samples}] or null, "
                          f"got {s.cv_samples}")


EXPECTED_LIKELIHOODS = {"regression": ("gaussian", "warp"), "multiclass": ("softmax",), "binary": ("logistic",),
                        "count": ("lgcp",)}


def check_data(cfg: DictConfig, ds) -> None:
    s = cfg.savigp
    if s.num_inducing is not None and ds.fixed_splits:
        n_train = len(ds.fixed_splits[cfg.seed % len(ds.fixed_splits)][0])
        if s.num_inducing > n_train:
            raise ConfigError(f"savigp.num_inducing={s.num_inducing} is larger than the training part ({n_train} rows "
                              f"of dataset {ds.name}); set savigp.num_inducing <= {n_train}")
    if s.likelihood not in EXPECTED_LIKELIHOODS.get(ds.task, ()):
        raise ConfigError(f"savigp.likelihood={s.likelihood} does not fit dataset {ds.name} (task {ds.task}); "
                          f"use {' or '.join(EXPECTED_LIKELIHOODS.get(ds.task, ('?',)))}")


class TargetTransform:
    """Per-dataset target transforms (spec 3.4): Boston mean-centred, Creep/Abalone (y - min)/(max - min) - 0.5."""

    def __init__(self, kind: str, y_train: np.ndarray):
        self.kind, self.shift, self.scale = kind, 0.0, 1.0
        if kind == "center":
            self.shift = float(y_train.mean())
        elif kind == "minmax":
            lo, hi = float(y_train.min()), float(y_train.max())
            self.shift, self.scale = lo + 0.5 * (hi - lo), hi - lo

    def forward(self, y):
        return (y - self.shift) / self.scale

    def inverse(self, t):
        return t * self.scale + self.shift

    @property
    def log_jacobian(self) -> float:
        """NLPD in raw units = NLPD in transformed units + log scale."""
        return math.log(self.scale)


def inducing_inputs(cfg, X: torch.Tensor, M: int, seed: int):
    """Nested random subsets: one permutation per seed, Z = its first M rows (so smaller SF gives a subset of the
    larger SF's Z; the same Z for every process, unlike upstream's bug 4), or k-means centres."""
    if cfg.savigp.inducing == "kmeans":
        Z = initial_inducing_points(X, M, InducingInit.kmeans, seed)
        d = torch.cdist(X, Z)
        return Z, d.argmin(1)
    perm = torch.as_tensor(np.random.default_rng(seed).permutation(X.shape[0])[:M])
    return X[perm].clone(), perm


def latent_targets(s, y: torch.Tensor, lik, Q: int) -> torch.Tensor:
    """Per-point values of the latent processes used to initialise m (upstream: y at the inducing points)."""
    if s.likelihood == "softmax":
        return torch.nn.functional.one_hot(y.long(), Q).double()
    if s.likelihood == "warp":
        return lik.t(y).detach().unsqueeze(-1)
    if s.likelihood == "lgcp":
        return torch.log(y + 0.5).unsqueeze(-1) - lik.log_offset
    return y.unsqueeze(-1)


def fit_size(config: dict) -> float | None:
    """M of a resolved config as `build` sets it, with the dataset's registry row count for the training rows
    (no data loaded; only ratios between sizes of one dataset are used): for the sweep's estimate from finished
    runs at other sizes (sweeps/size_scaling.py). None: unknown (a csv dataset)."""
    from ..data import get_spec

    s = config["savigp"]
    if s.get("num_inducing"):
        return float(s["num_inducing"])
    try:
        return max(1.0, round(s["sparsity_factor"] * get_spec(config["dataset"]["name"]).shape[0]))
    except Exception:  # a dataset the registry cannot size without its file
        return None


def build(cfg: DictConfig, X: torch.Tensor, y: torch.Tensor, num_classes: int) -> Savigp:
    s = cfg.savigp
    lik = build_likelihood(s.likelihood, num_classes=num_classes, noise_init=s.noise_init, warp=s.warp, offset=s.offset)
    Q = lik.num_latent
    N = X.shape[0]
    M = s.num_inducing or max(1, int(round(s.sparsity_factor * N)))
    Z, assign = inducing_inputs(cfg, X, min(M, N), cfg.seed)
    K = 1 if s.posterior == "fg" else s.components
    model = Savigp([Z] * Q, lik, posterior=s.posterior, components=K, ard=s.ard, lengthscale=s.lengthscale_init,
                   variance=s.variance_init, latent_noise=s.latent_noise, entropy=s.entropy, estimator=s.estimator,
                   cv_samples=s.cv_samples, cv_holdout=s.cv_holdout, seed=cfg.seed)
    T = latent_targets(s, y, lik, Q)  # (N, Q)
    if s.inducing == "kmeans":  # cluster mean of the targets
        m0 = torch.stack([T[assign == c].mean(0) if (assign == c).any() else T.mean(0) for c in range(Z.shape[0])])
    else:
        m0 = T[assign]
    model.init_posterior(m0.T.unsqueeze(0))
    return model


def upstream_gaussian_nlpd_bug(model: Savigp, b, Sig, ys_t):
    """Per-point NLPD as upstream savigp computes it for the Gaussian likelihood (spec 3.4 bug 1, the values behind its
    Fig. 1 Boston NLPD): UnivariateGaussian.predict has lpd_k = -[(0.5 (y - mu_k))^2 / v_k + log(2 pi v_k)] with
    v_k = Sigma_k* + sigma^2 (instead of -(y - mu_k)^2 / (2 v_k) - log(2 pi v_k) / 2), combined over the components as
    -logsumexp_k(lpd_k, weights pi_k). For comparison with upstream's plotted NLPD only; `nlpd` is the correct value."""
    lik = model.likelihood
    log_pi = torch.log_softmax(model.pi_logits, 0)
    lpd = []
    for k in range(model.K):
        v = Sig[k][..., 0] + lik.sigma2
        lpd.append(-((0.5 * (ys_t - b[k][..., 0])) ** 2 / v + (2 * math.pi * v).log()))
    return -torch.logsumexp(log_pi[:, None] + torch.stack(lpd), 0)


@torch.no_grad()
def evaluate(model: Savigp, s, Xs, ys_t, ys_raw, tf: TargetTransform, task: str, pred_samples: int, seed: int):
    """Per-point metrics on the test set, in the data's raw units."""
    gen = torch.Generator(device=Xs.device).manual_seed(seed + 1)
    eps = model.draw_eps(pred_samples, Xs.shape[0], gen)
    b, Sig = model.marginals(Xs)
    pi = model.pi
    lik = model.likelihood
    if s.likelihood in ("gaussian", "warp"):
        lp = model.log_predictive(Xs, ys_t, eps)
        mean_t = sum(pi[k] * lik.predict_mean(b[k], Sig[k]) for k in range(model.K))
        pred = tf.inverse(mean_t)
        out = {"sse": (ys_raw - pred).square(), "nlpd": -lp + tf.log_jacobian}
        if s.likelihood == "gaussian":
            out["upstream_boston_nlpd_bug"] = upstream_gaussian_nlpd_bug(model, b, Sig, ys_t) + tf.log_jacobian
        return out
    if s.likelihood == "lgcp":
        lp = model.log_predictive(Xs, ys_t, eps)
        rate = sum(pi[k] * (b[k][..., 0] + lik.log_offset + 0.5 * Sig[k][..., 0]).exp() for k in range(model.K))
        return {"sse": (ys_raw - rate).square(), "nlpd": -lp}
    probs = sum(pi[k] * lik.class_probs(b[k], Sig[k], eps) for k in range(model.K))
    if s.likelihood == "softmax":
        p_true = probs.gather(1, ys_t.long().unsqueeze(1))[:, 0]
        err = (probs.argmax(1) != ys_t.long()).double()
    else:  # logistic, labels +-1, probs = p(y = +1)
        p_true = torch.where(ys_t > 0, probs, 1 - probs)
        err = ((probs > 0.5).double() * 2 - 1 != ys_t).double()
    return {"err": err, "nlp": -p_true.clamp_min(1e-300).log()}


def summarise(points: dict) -> dict:
    out = {}
    for k, v in points.items():
        v = v.cpu().numpy()
        out[f"test_{k}"] = float(v.mean())
        out[f"test_{k}_median"] = float(np.median(v))
        if k == "err":  # normal-approximation 95 % CI of the error rate
            out["test_err_ci95"] = float(1.96 * math.sqrt(v.mean() * (1 - v.mean()) / len(v)))
    return out


def write_points(run_dir: Path, points: dict) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    cols = list(points)
    vals = np.stack([points[c].cpu().numpy() for c in cols], 1)
    with open(run_dir / "points.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        w.writerows(vals.tolist())


def learned_kernel(model: Savigp) -> dict:
    """hyp_lengthscale (mean over processes and input dimensions) and hyp_variance (mean over processes) after the
    fit: whether the hyp block moved them from their init is part of reading a run."""
    with torch.no_grad():
        ell = torch.cat([k.log_lengthscale.clamp(max=LOG_UPPER).exp() for k in model.kernels])
        var = torch.stack([k.log_variance.clamp(max=LOG_UPPER).exp() for k in model.kernels])
    return {"hyp_lengthscale": float(ell.mean()), "hyp_variance": float(var.mean())}


def fit_checkpoint(cfg: DictConfig, run_dir, identity: dict | None = None) -> Checkpoint | None:
    """Where the fit saves its state every trainer.checkpoint_every_s seconds (None when 0: off); a rerun of the
    point resumes there (block_optimizer.py, training/checkpoint.py)."""
    every = cfg.trainer.get("checkpoint_every_s")
    return Checkpoint(Path(run_dir) / CHECKPOINT, every, identity) if every else None


def execute(cfg: DictConfig, ctx) -> Outcome:
    """One SAVIGP run on ctx's protocol split (seeded by the harness); fills and returns ctx.outcome."""
    out = ctx.outcome
    s = cfg.savigp
    device = ctx.device
    prep = ctx.split(torch.float64)  # X normalised per protocol.normalize_x; y taken raw below
    ds, split = prep.dataset, prep.split
    Xtr, Xte = prep.tensors["train"][0] * s.x_scale, prep.tensors["test"][0] * s.x_scale
    ytr_raw, yte_raw = (torch.as_tensor(ds.y[getattr(split, p)], dtype=torch.float64, device=device) for p in ("train", "test"))
    task = ds.task
    out.task, out.likelihood, out.estimator, out.objective = task, s.likelihood, s.estimator, "elbo"
    out.hyperparameters, out.train_size = "joint", int(Xtr.shape[0])
    tf = TargetTransform(s.transform if task == "regression" else "none", ytr_raw.cpu().numpy())
    if task == "binary":  # labels {0, 1} -> {-1, +1}
        ytr, yte = 2 * ytr_raw - 1, 2 * yte_raw - 1
    else:
        ytr, yte = tf.forward(ytr_raw), tf.forward(yte_raw)
    num_classes = int(ds.y.max()) + 1 if task == "multiclass" else 1
    model = build(cfg, Xtr, ytr, num_classes).to(device)
    out.num_inducing = model.M
    ctx.apply_threads(Xtr.shape[0], model.M, None)

    track = None
    if s.track:
        def track():
            return {k: v for k, v in summarise(evaluate(model, s, Xte, yte, yte_raw, tf, task, s.pred_samples, cfg.seed)).items()
                    if not k.endswith("_median")}

    out.train = {"iterations": 0, "epochs": None, "converged": False, "wall_s": 0.0, "cpu_s": 0.0, "final_loss": None,
                 "dtype": "float64"}
    ctx.begin_training()
    res = fit(model, Xtr, ytr, num_samples=s.num_samples, blocks=tuple(s.blocks),
              evals={b: s[f"evals_{b}"] for b in BLOCKS}, max_iter=s.max_iter,
              optimizer=s.optimizer, lr=s.lr, xtol=s.xtol, ftol=s.ftol, resample=s.resample, seed=s.sample_seed + cfg.seed,
              track=track, max_wall_s=s.max_wall_s,
              heartbeat=Heartbeat.for_progress(cfg.trainer.progress), checkpoint=fit_checkpoint(cfg, ctx.run_dir, ctx.checkpoint_identity))
    out.status, out.error, out.curve = res.status, res.error, res.curve
    out.train = {"iterations": res.iterations, "epochs": None, "converged": bool(res.converged), "wall_s": res.wall_s,
                 "cpu_s": res.cpu_s, "final_loss": -res.final_elbo if res.final_elbo is not None else None,
                 "dtype": "float64"}
    if res.status == "ok":
        points = evaluate(model, s, Xte, yte, yte_raw, tf, task, s.pred_samples, cfg.seed)
        out.metrics = {**summarise(points), "sparsity_factor": float(s.sparsity_factor), "final_elbo": res.final_elbo,
                       **learned_kernel(model)}
        out.artifacts.append(lambda run_dir: write_points(run_dir, points))
    return out
