"""The SVGP family's batched beta grid (ModelSpec.beta_group, config/capabilities.py BetaGroup): the members of one
beta group -- the same configuration at every beta index of the sweep -- trained as ONE set of tensors with a
leading batch dimension B (models/batched_svgp.py), each member's Outcome handed to the run harness, which writes it
as the ordinary run (run/batched.py: the group lock, which members and their locks, the data, the records).

Per batch of members: the RNG state the unbatched run has after its data split, the template bundle built from it,
the thread rule (the harness's, lent as services.apply_threads), the Trainer with a checkpoint in the group's
directory; for fixed methods stage 1 once for the batch (and stored, training/stage1_store.py); then fit_batched, and
per member the ordinary evaluation (models/plugin.py evaluate) and record fields. A batch whose step fails as a whole
(BatchFailed: a Cholesky error) hands its unfinished members to services.unbatched.

The batch (what it holds, its loss and how it shrinks as members stop: models/batched_svgp.py) starts from the
unbatched run's initial state (same seed, same RNG draws). Each step equals the unbatched step to rounding (batched
kernels sum in another order); over thousands of Adam steps a member whose training is chaotic (loss spikes) can
drift from the unbatched run as a run on another BLAS would. A member stops when converged, at max_iters or at a
non-finite loss (keeping its state before the step); the batch ends when all have stopped.
Each member is then evaluated through the ordinary (unbatched) bundle and written as an ordinary run
directory with the run name the unbatched run has (`objective.beta_batch` is not part of run names), so
reports, resumption and later sweeps (batched or not) see no difference. run.json adds `train.batched: B`.

Supported: model=svgp, objective elbo (beta-ELBO) or dlm, Adam, no trainer.track_every; joint or
fixed hyperparameters; whitened or unwhitened strategy (the fixed fast path, FrozenPredictive, is whitened only:
unwhitened members take the ordinary model call, as unbatched); likelihoods: Gaussian (noise with batch_shape
[B]) with estimator=exact, or one without parameters (probit, logistic, poisson_exp, poisson_softplus: one
instance for all members, log p(y|f) broadcasts over B) with estimator=exact (closed form or quadrature, as
unbatched), quadrature or bmc. Other settings of these SVGP methods (Student-t, uPS, smooth-bMC, L-BFGS) raise
a ConfigError. Minibatch training (trainer.batch_size below the training size, known once the data are loaded)
runs each point unbatched, one after the other. Other models and objectives (sq_dlm, SGPR, FITC) and methods
outside the beta grid ignore the flag (so an experiment can set it for its whole method sweep).
bMC: the members' samples are drawn jointly (one [L, B, n] draw per step instead of B draws of [L, n]), so a
batched bMC member's trajectory equals the unbatched run's in distribution, not bit for bit (same seed, same
batched result; tests/integration/test_batched_nonconjugate.py).
"""

from __future__ import annotations

import time

from omegaconf import DictConfig

from ..config.schema import Hyperparameters
from ..errors import ConfigError
from ..results.outcome import Outcome
from ..training import gpytorch_internals
from ..training.checkpoint import Checkpoint
from ..training.stage1_store import PretrainStore
from ..training.trainer import Trainer, TrainResult
from ..util.rng import set_rng
from .batched_svgp import BatchedBundle, BatchFailed, batchable_likelihood, fit_batched
from .builders import build_bundle
from .fixed import pretrain_and_freeze
from .plugin import add_stop_and_bounds, describe, evaluate, train_section

MAX_BATCH_ELEMENTS = 2e7  # B * M * n per batch (one [B, n, M] float64 tensor: 160 MB); larger groups are chunked
BATCHED_ESTIMATORS = ("exact", "quadrature", "bmc")


def requested(cfg: DictConfig) -> bool:
    """beta_batch asked for, on a beta-grid point (after apply_beta_grid_flag), of an SVGP objective with a beta
    (elbo, dlm). Other objectives (sq_dlm) ignore the flag and run unbatched."""
    o = cfg.objective
    return (bool(o.get("beta_batch", False)) and o.beta_index is not None and o.name in ("elbo", "dlm")
            and cfg.model.name == "svgp")


def full_batch(batch_size: int | None, n_train: int | None) -> bool:
    """A trainer.batch_size >= n_train is full batch (the presets' 6000 on small data); n_train None: not known yet."""
    return batch_size is None or n_train is None or batch_size >= n_train


def check_supported(cfg: DictConfig) -> None:
    """The settings a batched group needs. Minibatches are not among them, and are not an error: the training size
    is known only once the data are loaded, and then the harness runs the point unbatched (one experiment, e.g.
    dlm_supp_beta_cadata at n = 691 and 13829, can set the flag for all its sizes)."""
    lik = cfg.model.get("likelihood") or "gaussian"
    estimator = cfg.estimator.name
    optimizer = getattr(cfg.trainer.optimizer, "value", cfg.trainer.optimizer)
    bad = [f"{k}={v}" for k, v, ok in (
        ("estimator.name", estimator, estimator in BATCHED_ESTIMATORS),
        ("model.likelihood", lik, batchable_likelihood(lik)),
        ("estimator.name", f"{estimator} with the Gaussian likelihood", lik != "gaussian" or estimator == "exact"),
        ("trainer.optimizer", optimizer, optimizer == "adam"),
        ("trainer.track_every", cfg.trainer.track_every, not cfg.trainer.track_every),
        ("run_dir", cfg.run_dir, not cfg.run_dir),
        # a stage 1 per beta: the group's members would not share the frozen hyperparameters
        ("objective.pretrain_beta", cfg.objective.get("pretrain_beta", "one"),
         cfg.objective.get("pretrain_beta", "one") == "one" or cfg.objective.hyperparameters is not Hyperparameters.fixed),
    ) if not ok]
    if bad:
        raise ConfigError("objective.beta_batch=true supports estimator=exact|quadrature|bmc (Gaussian likelihood: "
                          "exact only), the Gaussian likelihood or one without parameters (probit, logistic, "
                          f"poisson_exp, poisson_softplus), Adam, no track_every, no run_dir, no pretrain_beta=same; got "
                          f"{', '.join(bad)}")


def train(cfg: DictConfig, members: list, prep, device, dtype, services) -> dict:
    """Train `members` [(k, cfg_k, run_dir)] in batches of at most MAX_BATCH_ELEMENTS; {k: (record, run_dir)}."""
    n = prep.tensors["train"][0].shape[0]
    per_chunk = max(1, int(MAX_BATCH_ELEMENTS // max(1, n * cfg.model.num_inducing)))
    out = {}
    for i in range(0, len(members), per_chunk):
        out.update(_train_members(cfg, members[i:i + per_chunk], prep, device, dtype, services))
    return out


def _train_members(cfg, members, prep, device, dtype, services) -> dict:
    """Train `members` in one batch; each member written through services.write; {k: (record, run_dir)}."""
    X, y = prep.tensors["train"]
    n, B = X.shape[0], len(members)
    set_rng(prep.rng_after)  # as the unbatched run builds its bundle: seeded, then the data prepared
    template = build_bundle(members[0][1], X, y).to(device=device, dtype=dtype)
    threads = services.apply_threads(n * B, template.num_inducing, None)
    fixed = cfg.objective.hyperparameters is Hyperparameters.fixed
    trainer = Trainer.from_config(cfg.trainer, seed=cfg.seed)
    trainer.checkpoint = group_checkpoint(services.group_dir, [k for k, _, _ in members], trainer.checkpoint_every_s)
    start = time.perf_counter()
    pretrain, pretrain_info = None, {}
    results = None
    if fixed:  # stage 1 once for the whole group (and stored for every later group with the same key)
        pretrain, pretrain_info = pretrain_and_freeze(cfg, template, X, y, trainer, device, dtype,
                                                      store=PretrainStore(cfg.results_dir))
        if pretrain.status != "ok":
            stage1 = pretrain_info["pretrain_model"].upper()
            results = [TrainResult(status=pretrain.status, error=f"{stage1} pretraining: {pretrain.error}")
                       for _ in members]
    out = {}
    batch = None
    if results is None:
        batch, results = _fit(template, fixed, X, y, trainer, members, services, out)
    batch_wall = time.perf_counter() - start
    for b, (k, mcfg, run_dir) in enumerate(members):
        if k in out:
            continue
        if batch is not None and results[b].status == "ok":
            batch.gather(b)
        outcome, error = _member_outcome(mcfg, prep, template, results[b], pretrain, pretrain_info, B, batch_wall)
        out[k] = services.write(mcfg, run_dir, outcome, threads, error)
    trainer.checkpoint.remove()  # every member's run.json is written
    trainer.checkpoint.sibling("stage1").remove()
    return out


def _fit(template, fixed, X, y, trainer, members, services, out) -> tuple:
    """(batch, results): fit_batched from q(u) initialised as on the first unbatched training call; a batch failing
    as a whole runs its unfinished members unbatched (into `out`)."""
    template.train()
    gpytorch_internals.initialise_q_u(template.model.variational_strategy)
    batch = BatchedBundle(template, [float(m[1].objective.beta) for m in members], fixed)
    try:
        return batch, fit_batched(batch, X, y, trainer)
    except BatchFailed as err:  # unfinished members: the ordinary unbatched run
        results, active = err.args[1], err.args[2]
        for b, (k, mcfg, _) in enumerate(members):
            if active[b]:
                out[k] = services.unbatched(mcfg)
        return batch, results


def group_checkpoint(group_dir, ks: list[int], every_s: float) -> Checkpoint:
    """The checkpoint of a batch of members `ks` (training/checkpoint.py), in the group's directory; it resumes
    only a batch of the same members of the same group (members written meanwhile make a new batch, which starts
    over). Its identity is the group's name, not a config hash: any member's job may run the group."""
    return Checkpoint(group_dir / f"checkpoint-{ks[0]}-{ks[-1]}.pt", every_s,
                      identity={"run": group_dir.name, "members": list(ks)})


def _member_outcome(cfg, prep, bundle, result, pretrain, pretrain_info, B, batch_wall):
    """The Outcome the unbatched run has for this member (same fields; train.batched added), and the exception of
    its evaluation (None: evaluated)."""
    out = Outcome(status=result.status, error=result.error, curve=result.curve)
    describe(cfg, out, prep, bundle)
    error = None
    try:
        if result.status == "ok":
            evaluate(cfg, bundle, prep, out)
    except Exception as err:  # noqa: BLE001 - recorded by the harness as a failed run, with its traceback
        error = err
    # both stages: the batch clock starts before stage 1
    out.train = {**train_section(cfg, result, pretrain, pretrain_info, batch_wall), "batched": B,
                 "batch_wall_s": batch_wall}
    add_stop_and_bounds(cfg, out, result, bundle)
    return out, error


def _full_batch(cfg: DictConfig, n_train: int) -> bool:
    return full_batch(cfg.trainer.batch_size, n_train)
