"""Batched beta grid: every beta of one (dataset, split, method, seed) trained in one model and each member written
by the harness's record writer (run/record.py). A capability a model family offers through its ModelSpec
(`beta_group`, config/capabilities.py BetaGroup): this module is the harness's part (the group lock, which members,
their run locks, the data, writing each member's record); the family's part -- the SVGP family's,
models/beta_group.py with models/batched_svgp.py -- trains the members and gets the harness's services as
callbacks (GroupServices), so neither imports the other. The sweep's beta indices are passed in by the caller
(sweeps/compose.py reads them from the Hydra job).

`objective.beta_batch=true` with `objective.beta_index=k`: the run trains the whole group -- the same configuration at
every beta index of the sweep (the caller's `beta_indices`, else the full grid [n, n/2, ... >= min_beta]) -- and
writes every member as an ordinary run directory with the run name the unbatched run has (`objective.beta_batch` is
not part of run names), so reports, resumption and later sweeps (batched or not) see no difference. What is batched,
how, and which settings are supported: the family's module (models/beta_group.py). The family's `full_batch` says
whether the group batches at the loaded training size; when not, the point runs alone, unbatched, under its own run
lock.

Locks: the group holds `<results>/<experiment>/.beta_batch/<run name of index 0>/.lock` (waited for) and the
ordinary per-run lock of each member it trains; members done already (ok / diverged, failed unless
resume.retry_failed; all with resume.force) or locked by another process are left out. A sweep job whose point
the lock's holder is training does not wait: it counts as skipped, so joblib / SLURM workers move on to the
next group.
"""

from __future__ import annotations

import copy
import functools
import json
import time
from contextlib import contextmanager
from pathlib import Path

from omegaconf import DictConfig

from ..config.beta_grid import beta_grid, resolve_beta
from ..config.capabilities import GroupServices, ModelSpec
from ..errors import ConfigError
from ..registry.models import MODELS
from ..registry.validation import check_writable
from ..results.atomic import atomic_write_text
from ..results.contract import read_status
from ..util.locks import RunLock, holder
from ..util.rng import get_rng
from .. import data
from .context import DTYPES, resolve_device, seed_everything, split_tensors
from .naming import run_dir_for, run_name
from .record import (build_record, probe_run_dir, progress, record_failure, remove_if_empty, topmost_missing,
                     write_run)
from .threads import apply_threads

GROUP_DIR = ".beta_batch"


class RunningElsewhere(RuntimeError):
    """The member this run was asked for is locked by another process."""


def requested(cfg: DictConfig) -> bool:
    """beta_batch asked for, of a model whose family offers a batched beta grid (ModelSpec.beta_group) and a point
    it batches (the SVGP family: a beta-grid point of elbo or dlm). Other models and objectives ignore the flag."""
    spec = MODELS.get(cfg.model.name)
    return spec is not None and spec.beta_group is not None and spec.beta_group.requested(cfg)


def member_config(cfg: DictConfig, k: int, n_train: int | None = None) -> DictConfig:
    m = copy.deepcopy(cfg)
    m.objective.beta_index = k
    if n_train is not None:
        m.objective.beta = n_train / 2**k
    return m


def group_indices(cfg: DictConfig, n_train: int, beta_indices: list[int] | None) -> list[int]:
    """The beta indices a group trains at this training size: the sweep's (None: the full grid) within the grid."""
    size = grid_size(cfg, n_train)
    return [k for k in (beta_indices or range(size)) if 0 <= k < size]


def grid_size(cfg: DictConfig, n_train: int) -> int:
    return len(beta_grid(n_train, cfg.objective.min_beta))


def group_lock_dir(cfg: DictConfig) -> Path:
    return Path(cfg.results_dir) / cfg.experiment / GROUP_DIR / run_name(member_config(cfg, 0))


# The size of the group's beta grid at its training size, written into the group's lock directory by the process
# that trains it, once its data are loaded: a job waiting for the group whose beta_index lies beyond it stops waiting.
GRID_FILE = "beta_grid.json"


def _record_grid(cfg: DictConfig, n_train: int) -> None:
    grid = {"n_train": n_train, "points": grid_size(cfg, n_train)}
    atomic_write_text(group_lock_dir(cfg) / GRID_FILE, json.dumps(grid))


def _beyond_recorded_grid(cfg: DictConfig, path: Path) -> bool:
    try:
        points = int(json.loads((path / GRID_FILE).read_text())["points"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return cfg.objective.beta_index is not None and cfg.objective.beta_index >= points


_HELD: set[Path] = set()


@contextmanager
def group_lock(cfg: DictConfig, poll_s: float = 1.0, member: Path | None = None):
    """Hold the group's lock (re-entrant within a process); waits while another process holds it and yields
    True. With `member` (a run dir of the group) it stops waiting, and yields False, once the process holding
    the group lock also holds `member`'s run lock: that process is training `member` in its batch. A parallel
    launcher's other jobs of the group then free their worker at once instead of waiting out the group. It yields
    None once the holder has recorded a grid that ends before this point's beta_index (GRID_FILE): a point beyond
    the grid at the group's training size, which no process will train (before 2026-12-08 such a job, e.g.
    beta_index 19 at n = 3000, waited for the whole group, idling its sweep or worker)."""
    path = group_lock_dir(cfg)
    if path in _HELD:
        yield True
        return
    lock = RunLock(path)
    while not lock.acquire():
        if member is not None:
            if _beyond_recorded_grid(cfg, path):
                yield None
                return
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


def execute_group(cfg: DictConfig, spec: ModelSpec, unbatched, beta_indices: list[int] | None = None):
    """harness.execute for objective.beta_batch=true (cfg validated): train the group, write every member, return
    member k's (record, run_dir). `unbatched`: the harness's execute, for members run alone; beta_indices: the
    sweep's (None: the full grid)."""
    spec.beta_group.check(cfg)
    check_writable(run_dir_for(cfg).parent)
    lock_dir = group_lock_dir(cfg)
    created = None if lock_dir.exists() else topmost_missing(lock_dir)
    try:
        with group_lock(cfg):
            return _train_group(cfg, spec, unbatched, beta_indices)
    except (ConfigError, data.DatasetError, KeyboardInterrupt):  # refused (M > n) or stopped: no empty group folders
        if created is not None:
            remove_if_empty(lock_dir, created)
        raise


def _train_group(cfg: DictConfig, spec: ModelSpec, unbatched, beta_indices):
    device = resolve_device(cfg.device.value)
    dtype = DTYPES[cfg.dtype.value]
    seed_everything(cfg.seed)
    dataset = data.load_from_config(cfg.dataset)
    if spec.check_data is not None:
        spec.check_data(cfg, dataset)  # as the unbatched run (RunContext.load): M > n refused, not cut to n
    prep = split_tensors(cfg, dataset, device, dtype)
    prep.rng_after = get_rng()
    n = prep.tensors["train"][0].shape[0]
    if not spec.beta_group.full_batch(cfg, n):
        return _minibatch_point(cfg, unbatched)
    _record_grid(cfg, n)
    own = cfg.objective.beta_index
    cfg.objective.beta = resolve_beta(cfg.objective, n)  # OutsideBetaGrid for the own index, as unbatched
    indices = sorted(set(group_indices(cfg, n, beta_indices)) | {own})

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
        services = GroupServices(write=functools.partial(_write_member, prep, device),
                                 unbatched=lambda mcfg: unbatched(_plain(mcfg)), apply_threads=apply_threads,
                                 group_dir=group_lock_dir(cfg))
        return spec.beta_group.train(cfg, members, prep, device, dtype, services)[own]
    finally:
        for lock in locks:
            lock.release()


def _plain(cfg: DictConfig) -> DictConfig:
    """The point as the ordinary, unbatched run."""
    plain = copy.deepcopy(cfg)
    plain.objective.beta_batch = False
    return plain


def _minibatch_point(cfg: DictConfig, unbatched):
    """Minibatch training (trainer.batch_size < n): this point alone, as the ordinary run, under its own run lock.
    The group lock stays held, so a parallel launcher's other jobs of this group wait their turn."""
    plain = _plain(cfg)
    lock = RunLock(run_dir_for(plain))
    if not lock.acquire():
        raise RunningElsewhere(f"{run_dir_for(plain)} is locked by another process")
    try:
        return unbatched(plain)
    finally:
        lock.release()


def _write_member(prep, device, cfg, run_dir, outcome, threads, error=None):
    """GroupServices.write: the run.json + curve.csv the unbatched run writes for this member (the family's Outcome,
    train.batched added), through the harness's record writer; a progress line when the batch had several."""
    tb = record_failure(outcome, error) if error is not None else None
    record = build_record(cfg, outcome, prep.dataset, device, threads)
    write_run(run_dir, record, outcome, tb)
    if outcome.train.get("batched", 1) > 1:
        progress(run_dir, f"{record.status} (batched)", record.metrics, record.train.get("wall_s"))
    return record, run_dir
