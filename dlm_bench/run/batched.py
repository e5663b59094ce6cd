"""Batched beta grid, a harness feature: every beta of one (dataset, split, method, seed) trained in one model
(models/batched_svgp.py) and each member written by the harness's record writer (run/record.py).

`objective.beta_batch=true` with `objective.beta_index=k`: the run trains the whole group -- the same
configuration at every beta index of the sweep (`hydra.sweeper.params["objective.beta_index"]`, else the full
grid [n, n/2, ... >= min_beta]) -- as ONE set of tensors with a leading batch dimension B (GPyTorch batch
shapes): per-member q(u) (variational mean [B, M], Cholesky [B, M, M]); for joint methods also per-member
kernel hyperparameters, Z [B, M, D] and noise; for fixed methods the stage-1 SVGP is trained once and its
kernel matrices (chol K_ZZ, A = L^-1 K_ZX) are shared by every member. The loss is the sum over members of
each member's own loss, so the gradient of member b's slice is member b's gradient, and Adam (elementwise)
makes exactly the unbatched update; members start from the unbatched run's initial state (same seed, same
RNG draws). Each step equals the unbatched step to rounding (batched kernels sum in another order); over
thousands of Adam steps a member whose training is chaotic (loss spikes) can drift from the unbatched run as a
run on another BLAS would. Each member keeps its own StoppingRule: after an iteration in which members stopped
(converged, max_iters or a non-finite loss, which keeps its state before the step) the batch shrinks to the
members still training, their state and Adam moments carried over; the batch ends when all have stopped.
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
A batch whose step fails as a whole (a Cholesky error) re-runs its unfinished members unbatched.

Locks: the group holds `<results>/<experiment>/.beta_batch/<run name of index 0>/.lock` (waited for) and the
ordinary per-run lock of each member it trains; members done already (ok / diverged, failed unless
resume.retry_failed; all with resume.force) or locked by another process are left out. A sweep job whose point
the lock's holder is training does not wait: it counts as skipped, so joblib / SLURM workers move on to the
next group.
"""

from __future__ import annotations

import copy
import os
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig

from ..config.beta_grid import beta_grid, resolve_beta
from ..config.schema import Hyperparameters
from ..errors import ConfigError
from ..models.batched_svgp import BatchedBundle, BatchFailed, batchable_likelihood, fit_batched
from ..models.builders import build_bundle
from ..models.fixed import pretrain_and_freeze
from ..models.bounds import at_bound_text, parameters_at_bounds
from ..models.plugin import check_data, describe, evaluate, stop_reason, train_section
from ..registry.validation import check_writable
from ..results.contract import read_status
from ..results.outcome import Outcome
from ..training.checkpoint import Checkpoint
from ..training.stage1_store import PretrainStore
from ..training.trainer import Trainer, TrainResult
from ..util.locks import RunLock, holder
from .. import data
from .context import DTYPES, resolve_device, seed_everything, split_tensors
from .naming import run_dir_for, run_name
from .progress import progress
from .record import build_record, probe_run_dir, record_failure, remove_if_empty, topmost_missing, write_run
from .threads import apply_threads

MAX_BATCH_ELEMENTS = 2e7  # B * M * n per batch (one [B, n, M] float64 tensor: 160 MB); larger groups are chunked
GROUP_DIR = ".beta_batch"


class RunningElsewhere(RuntimeError):
    """The member this run was asked for is locked by another process."""


def requested(cfg: DictConfig) -> bool:
    """beta_batch asked for, on a beta-grid point (after apply_beta_grid_flag), of an SVGP objective with a beta
    (elbo, dlm). Other models and objectives (sq_dlm, collapsed bounds) ignore the flag and run unbatched."""
    o = cfg.objective
    return (bool(o.get("beta_batch", False)) and o.beta_index is not None and o.name in ("elbo", "dlm")
            and cfg.model.name == "svgp")


BATCHED_ESTIMATORS = ("exact", "quadrature", "bmc")


def full_batch(batch_size: int | None, n_train: int | None) -> bool:
    """A trainer.batch_size >= n_train is full batch (the presets' 6000 on small data); n_train None: not known yet."""
    return batch_size is None or n_train is None or batch_size >= n_train


def check_supported(cfg: DictConfig) -> None:
    """The settings a batched group needs. Minibatches are not among them, and are not an error: the training size
    is known only once the data are loaded, and then _train_group runs the point unbatched (one experiment, e.g.
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


INDICES_ENV = "DLM_BENCH_SWEEP_BETA_INDICES"


def command_line_beta_indices(overrides: list[str]) -> str | None:
    """run_sweep: a command-line `objective.beta_index=<sweep>` is passed to the jobs (also joblib / SLURM
    workers) in the environment variable INDICES_ENV; this is its value (None: not on the command line)."""
    values = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0].lstrip("+~") == "objective.beta_index"
              and "=" in o]
    return values[-1] if values else None


def sweep_beta_indices() -> list[int] | None:
    """The beta indices of the sweep this job belongs to: the command line's objective.beta_index sweep, else
    the experiment's hydra.sweeper.params; None outside a Hydra job (then the group is the full grid)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        params = HydraConfig.get().sweeper.get("params") or {}
    except Exception:  # not inside a Hydra job
        return None
    value = os.environ.get(INDICES_ENV) or params.get("objective.beta_index")
    if value is None:
        return None
    from hydra.core.override_parser.overrides_parser import OverridesParser

    o = OverridesParser.create().parse_override(f"objective.beta_index={value}")
    return [int(v) for v in o.sweep_iterator()] if o.is_sweep_override() else [int(o.value())]


def member_config(cfg: DictConfig, k: int, n_train: int | None = None) -> DictConfig:
    m = copy.deepcopy(cfg)
    m.objective.beta_index = k
    if n_train is not None:
        m.objective.beta = n_train / 2**k
    return m


def group_lock_dir(cfg: DictConfig) -> Path:
    return Path(cfg.results_dir) / cfg.experiment / GROUP_DIR / run_name(member_config(cfg, 0))


_HELD: set[Path] = set()


@contextmanager
def group_lock(cfg: DictConfig, poll_s: float = 1.0, member: Path | None = None):
    """Hold the group's lock (re-entrant within a process); waits while another process holds it and yields
    True. With `member` (a run dir of the group) it stops waiting, and yields False, once the process holding
    the group lock also holds `member`'s run lock: that process is training `member` in its batch. A parallel
    launcher's other jobs of the group then free their worker at once instead of waiting out the group."""
    path = group_lock_dir(cfg)
    if path in _HELD:
        yield True
        return
    lock = RunLock(path)
    while not lock.acquire():
        if member is not None:
            trainer = holder(member)
            # pid -1: a lock file still being written (locks.holder); two such must not count as one holder
            if trainer is not None and trainer["pid"] != -1 and trainer == holder(path):
                yield False
                return
        time.sleep(poll_s)
    _HELD.add(path)
    try:
        yield True
    finally:
        _HELD.discard(path)
        lock.release()


def _done(run_dir: Path, resume) -> bool:
    status = read_status(run_dir)
    if status is None or resume.force:
        return False
    return status in ("ok", "diverged") or (status == "failed" and not resume.retry_failed)


# ---------------------------------------------------------------------------------------------- one group


def execute_group(cfg: DictConfig, unbatched):
    """harness.execute for objective.beta_batch=true (cfg validated): train the group, write every member, return
    member k's (record, run_dir). `unbatched`: the harness's execute, for members whose batch failed."""
    check_supported(cfg)
    check_writable(run_dir_for(cfg).parent)
    lock_dir = group_lock_dir(cfg)
    created = None if lock_dir.exists() else topmost_missing(lock_dir)
    try:
        with group_lock(cfg):
            return _train_group(cfg, unbatched)
    except (ConfigError, data.DatasetError, KeyboardInterrupt):  # refused (M > n) or stopped: no empty group folders
        if created is not None:
            remove_if_empty(lock_dir, created)
        raise


def _train_group(cfg: DictConfig, unbatched):
    device = resolve_device(cfg.device.value)
    dtype = DTYPES[cfg.dtype.value]
    seed_everything(cfg.seed)
    dataset = data.load_from_config(cfg.dataset)
    check_data(cfg, dataset)  # as the unbatched run (RunContext.load): M > n refused, not cut to n
    prep = split_tensors(cfg, dataset, device, dtype)
    prep.rng_after = _get_rng()
    X, y = prep.tensors["train"]
    n = X.shape[0]
    if not full_batch(cfg.trainer.batch_size, n):
        return _minibatch_point(cfg, unbatched)
    own = cfg.objective.beta_index
    cfg.objective.beta = resolve_beta(cfg.objective, n)  # OutsideBetaGrid for the own index, as unbatched
    size = len(beta_grid(n, cfg.objective.min_beta))
    wanted = sweep_beta_indices() or range(size)
    indices = sorted({k for k in wanted if 0 <= k < size} | {own})

    members, locks = [], []  # (k, cfg, run_dir)
    try:
        for k in indices:
            mcfg = member_config(cfg, k, n)
            run_dir = run_dir_for(mcfg)
            if k != own and _done(run_dir, cfg.resume):
                continue
            lock = RunLock(run_dir)
            if not lock.acquire():
                if k == own:
                    raise RunningElsewhere(f"{run_dir} is locked by another process")
                continue
            locks.append(lock)
            probe_run_dir(run_dir)  # before training, as an unbatched run (run/record.py)
            members.append((k, mcfg, run_dir))
        out = {}
        per_chunk = max(1, int(MAX_BATCH_ELEMENTS // max(1, n * cfg.model.num_inducing)))
        for i in range(0, len(members), per_chunk):
            out.update(_train_members(cfg, members[i:i + per_chunk], prep, device, dtype, unbatched))
        return out[own]
    finally:
        for lock in locks:
            lock.release()


def _minibatch_point(cfg: DictConfig, unbatched):
    """Minibatch training (trainer.batch_size < n): this point alone, as the ordinary run, under its own run lock.
    The group lock stays held, so a parallel launcher's other jobs of this group wait their turn."""
    plain = copy.deepcopy(cfg)
    plain.objective.beta_batch = False
    lock = RunLock(run_dir_for(plain))
    if not lock.acquire():
        raise RunningElsewhere(f"{run_dir_for(plain)} is locked by another process")
    try:
        return unbatched(plain)
    finally:
        lock.release()


def _train_members(cfg, members, prep, device, dtype, unbatched) -> dict:
    """Train `members` [(k, cfg, run_dir)] in one batch; write each run directory; {k: (record, run_dir)}."""
    X, y = prep.tensors["train"]
    n, B = X.shape[0], len(members)
    _set_rng(prep.rng_after)  # as the unbatched run builds its bundle: seeded, then the data prepared
    template = build_bundle(members[0][1], X, y).to(device=device, dtype=dtype)
    threads = apply_threads(n * B, template.num_inducing, None)
    fixed = cfg.objective.hyperparameters is Hyperparameters.fixed
    trainer = Trainer.from_config(cfg.trainer, seed=cfg.seed)
    trainer.checkpoint = group_checkpoint(cfg, [k for k, _, _ in members], trainer.checkpoint_every_s)
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
    if results is None:
        template.train()
        strategy = template.model.variational_strategy  # q(u) initialised as on the first training call
        if not strategy.variational_params_initialized.item():
            strategy._variational_distribution.initialize_variational_distribution(strategy.prior_distribution)
            strategy.variational_params_initialized.fill_(1)
        batch = BatchedBundle(template, [float(m[1].objective.beta) for m in members], fixed)
        try:
            results = fit_batched(batch, X, y, trainer)
        except BatchFailed as err:  # unfinished members: the ordinary unbatched run
            results, active = err.args[1], err.args[2]
            for b, (k, mcfg, run_dir) in enumerate(members):
                if active[b]:
                    plain = copy.deepcopy(mcfg)
                    plain.objective.beta_batch = False
                    out[k] = unbatched(plain)
    else:
        batch = None
    batch_wall = time.perf_counter() - start
    for b, (k, mcfg, run_dir) in enumerate(members):
        if k in out:
            continue
        if batch is not None and results[b].status == "ok":
            batch.gather(b)
        out[k] = _write_member(mcfg, prep, template, results[b], pretrain, run_dir, device, B, batch_wall,
                               pretrain_info, threads)
        if len(members) > 1:
            record, run_dir = out[k]
            progress(run_dir, f"{record.status} (batched)", record.metrics, record.train.get("wall_s"))
    trainer.checkpoint.remove()  # every member's run.json is written
    trainer.checkpoint.sibling("stage1").remove()
    return out


def group_checkpoint(cfg: DictConfig, ks: list[int], every_s: float) -> Checkpoint:
    """The checkpoint of a batch of members `ks` (training/checkpoint.py), in the group's directory; it resumes
    only a batch of the same members of the same group (members written meanwhile make a new batch, which starts
    over). Its identity is the group's name, not a config hash: any member's job may run the group."""
    name = f"checkpoint-{ks[0]}-{ks[-1]}.pt"
    return Checkpoint(group_lock_dir(cfg) / name, every_s, identity={"run": group_lock_dir(cfg).name,
                                                                         "members": list(ks)})


def _get_rng():
    import random

    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    return random.getstate(), np.random.get_state(), torch.get_rng_state(), cuda


def _set_rng(state) -> None:
    import random

    random.setstate(state[0])
    np.random.set_state(state[1])
    torch.set_rng_state(state[2])
    if state[3] is not None:
        torch.cuda.set_rng_state_all(state[3])


def _write_member(cfg, prep, bundle, result, pretrain, run_dir, device, B, batch_wall, pretrain_info, threads):
    """The run.json + curve.csv the unbatched run writes for this member (same fields; train.batched added), through
    the harness's record writer and the Trainer family's evaluation."""
    out = Outcome(status=result.status, error=result.error, curve=result.curve)
    describe(cfg, out, prep, bundle)
    tb = None
    try:
        if result.status == "ok":
            evaluate(cfg, bundle, prep, out)
    except Exception as err:
        tb = record_failure(out, err)
    # both stages: the batch clock starts before stage 1
    out.train = {**train_section(cfg, result, pretrain, pretrain_info, batch_wall), "batched": B,
                 "batch_wall_s": batch_wall}
    if result.status == "ok" and result.iterations:
        out.train["stopped"] = stop_reason(cfg, result)
        bound = at_bound_text(parameters_at_bounds(bundle))
        if bound:
            out.train["at_bound"] = bound
    record = build_record(cfg, out, prep.dataset, device, threads)
    write_run(run_dir, record, out, tb)
    return record, run_dir
