"""Pretrain once: the stage-1 model of fixed-hyperparameter runs, stored in the results directory.

Every beta of a fixed-DLM / fixed sq-DLM grid adopts the same stage-1 model (same dataset, split, seed and
stage-1 settings). `PretrainStore.get_or_train` trains it once per key and keeps its state under
`<results_dir>/_pretrain/<key>/`:

    state.pt         the stage-1 bundle's state_dict (torch.save; bit-identical on load)
    state.pt.sha256  its sha256 (`sha256sum -c` format), written right after state.pt
    meta.json        its TrainResult (status, iterations, converged, wall_s, final_loss, the loss curve)

A joint run that is itself a stage-1 model (the SGPR point of a DLM regression sweep: same data, split, seed,
ELBO at beta 1, trainer; models/fixed.py shared_stage1_key) trains through the same store, so it and the fixed
runs' stage 1 train once. Stage 1 is deterministic given the seed (Z from a seeded numpy generator, full-batch
or seeded minibatches), so the order in which they come does not change a number; tests/integration/test_dlm_fidelity.py
checks that both ways give the same run bit for bit.

The key is a hash of the stage-1 configuration (models/fixed.py pretrain_config) without what cannot change it
(beta, the method's estimator, where results go, progress bars). Concurrent sweeps: the first to need a key
takes `<key>/.lock` (O_CREAT | O_EXCL, dlm_bench/util/locks.py: a lock whose holder is gone, whose pid was reused or
which predates a reboot is stale and taken over), trains, and writes the files atomically (a temporary file,
then os.replace; meta.json last, so a key with a meta.json is complete); the others wait for meta.json and load
it. The wait is bounded (`wait_s`, default DLM_BENCH_PRETRAIN_WAIT_S or 6 h) and prints a line every
`progress_s` seconds (DLM_BENCH_PRETRAIN_PROGRESS_S, default 60) naming the lock's holder.

A state.pt that does not match its sha256 (or, stored before the sidecar existed, does not load) is corrupt:
the process that takes the lock retrains it, overwrites it and says so in one line on stderr.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf

from ..results.atomic import atomic_write
from .trainer import TrainResult

STORE_DIR = "_pretrain"
# top-level settings that do not change the stage-1 model
_NOT_IN_KEY = ("results_dir", "run_dir", "launcher", "resume", "report", "experiment", "paper", "eval", "pac",
               "lgm", "savigp")


def key_fields(pre_cfg: DictConfig) -> dict:
    """What `pretrain_key` hashes: the stage-1 configuration without what cannot change the stage-1 model."""
    d = OmegaConf.to_container(pre_cfg, resolve=True, enum_to_str=True)
    for k in _NOT_IN_KEY:
        d.pop(k, None)
    d.get("trainer", {}).pop("progress", None)
    d.get("trainer", {}).pop("checkpoint_every_s", None)
    d.get("trainer", {}).pop("track_every", None)
    # how the stage-1 beta was chosen: the stage-1 model is fixed by objective.beta, hashed (keys stay as they were)
    d.get("objective", {}).pop("pretrain_beta", None)
    if "beta_grid" in d.get("objective", {}):
        # "does the method use the beta grid" cannot change a model trained at beta 1. Hashed as True, the value
        # of every fixed method (so their keys stay as they were); the SGPR point (False) then shares the key
        d["objective"]["beta_grid"] = True
    if d.get("dataset", {}).get("categorical", 0) is None:  # added later: keys stay as they were
        d["dataset"].pop("categorical")
    if d.get("dataset", {}).get("name") == "csv":
        from .. import data

        d["dataset"]["sha256"] = data.user_file_sha256(d["dataset"].get("path"))
    return d


def pretrain_key(pre_cfg: DictConfig) -> str:
    """Hash of a stage-1 configuration (the output of models/fixed.py pretrain_config)."""
    d = key_fields(pre_cfg)
    digest = hashlib.sha1(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]
    return f"{d['dataset']['name']}_{d['model']['name']}_seed{d['seed']}_{digest}"


_RESULT_FIELDS = ("status", "error", "iterations", "epochs", "converged", "wall_s", "final_loss", "curve")
DEFAULT_WAIT_S = 6 * 3600.0
DEFAULT_PROGRESS_S = 60.0
SIDECAR = ".sha256"


def env_seconds(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not a number of seconds") from None
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"{name}={value!r} must be a finite number of seconds > 0")
    return seconds


def _log(message: str) -> None:
    print(f"dlm-bench: pretrain: {message}", file=sys.stderr, flush=True)


class PretrainBusy(TimeoutError):
    """Another live process held a stage-1 key's lock for longer than the wait limit (one line)."""


class CorruptState(Exception):
    """A stored stage-1 state that fails its checksum or does not load (one line: why)."""


class PretrainStore:
    """Stage-1 states keyed by `pretrain_key`."""

    def __init__(self, root: Path | str, poll_s: float = 0.5, wait_s: float | None = None,
                 progress_s: float | None = None):
        self.root = Path(root) / STORE_DIR
        self.poll_s = poll_s
        self.wait_s = wait_s if wait_s is not None else env_seconds("DLM_BENCH_PRETRAIN_WAIT_S", DEFAULT_WAIT_S)
        self.progress_s = (progress_s if progress_s is not None
                           else env_seconds("DLM_BENCH_PRETRAIN_PROGRESS_S", DEFAULT_PROGRESS_S))

    def _paths(self, key: str) -> tuple[Path, Path, Path]:
        d = self.root / key
        return d, d / "state.pt", d / "meta.json"

    def _load(self, key: str, bundle: torch.nn.Module) -> TrainResult | None:
        """The stored TrainResult (its state loaded into `bundle`), None if the key is not complete; raises
        CorruptState (bundle unchanged) when the stored state fails its checksum or does not load."""
        d, state_path, meta_path = self._paths(key)
        try:
            meta = json.loads(meta_path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        try:
            result = TrainResult(**{k: meta[k] for k in _RESULT_FIELDS if k in meta})
        except (TypeError, AttributeError):
            raise CorruptState(f"{meta_path} is not a stage-1 record") from None
        if result.status == "ok":
            state = _read_state(state_path)
            backup = copy.deepcopy(bundle.state_dict())
            try:
                bundle.load_state_dict(state)
            except (RuntimeError, KeyError, TypeError, ValueError) as err:
                bundle.load_state_dict(backup)
                raise CorruptState(f"{state_path} does not fit the stage-1 model ({_first_line(err)})") from None
        return result

    def _holder_line(self, lock_dir: Path, key: str, waited: float) -> str:
        from ..util.locks import LOCK_NAME, read_lock

        path = lock_dir / LOCK_NAME
        try:
            info = read_lock(path)
            since = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
            who = f"host {info['host']} pid {info['pid']} (since {since})"
        except (OSError, ValueError, KeyError, TypeError):
            who = "a process whose lock file is being written"
        return (f"waiting for stage-1 model {key}: {who} is training it; waited {waited:.0f} s of "
                f"{self.wait_s:.0f} s (DLM_BENCH_PRETRAIN_WAIT_S)")

    def get_or_train(self, key: str, bundle: torch.nn.Module, fit) -> tuple[TrainResult, bool]:
        """(the stage-1 TrainResult, reused?): load the stored state into `bundle`, or train it with `fit()`
        (which trains `bundle` in place and returns its TrainResult) and store it."""
        from ..util.locks import LOCK_NAME, RunLock

        d, state_path, meta_path = self._paths(key)
        start = time.monotonic()
        next_note = start + self.progress_s
        while True:
            try:
                result = self._load(key, bundle)
            except CorruptState:
                result = None  # rebuilt below by whoever takes the lock
            if result is not None:
                return result, True
            lock = RunLock(d)
            if lock.acquire():
                try:
                    corrupt = None
                    try:
                        result = self._load(key, bundle)  # finished (or rebuilt) by another process before we locked
                    except CorruptState as err:
                        corrupt = str(err)
                    if result is not None:
                        return result, True
                    if corrupt:
                        _log(f"stage-1 model {key} is corrupt ({corrupt}); rebuilding it")
                        meta_path.unlink(missing_ok=True)  # incomplete until rebuilt
                    result = fit()
                    if result.status == "ok":
                        state = {k: v.detach().cpu() for k, v in bundle.state_dict().items()}
                        buf = io.BytesIO()
                        torch.save(state, buf)
                        blob = buf.getvalue()
                        digest = hashlib.sha256(blob).hexdigest()
                        atomic_write(state_path, lambda fh: fh.write(blob))
                        atomic_write(_sidecar(state_path),
                                      lambda fh: fh.write(f"{digest}  {state_path.name}\n".encode()))
                    meta = {k: getattr(result, k) for k in _RESULT_FIELDS}
                    atomic_write(meta_path, lambda fh: fh.write(json.dumps(meta, indent=1).encode()))
                    return result, False
                finally:
                    lock.release()
            now = time.monotonic()
            if now - start > self.wait_s:
                raise PretrainBusy(f"stage-1 model {key} is still locked by another process after {self.wait_s:.0f} s "
                                   f"(DLM_BENCH_PRETRAIN_WAIT_S); if that process is gone, delete {d / LOCK_NAME}")
            if now >= next_note:
                _log(self._holder_line(d, key, now - start))
                next_note = now + self.progress_s
            time.sleep(self.poll_s)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def _sidecar(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + SIDECAR)


def _read_state(state_path: Path) -> dict:
    """The state dict in state.pt, checked against its sha256 sidecar; CorruptState if it fails. A state stored
    before sidecars existed is accepted if it loads."""
    try:
        blob = state_path.read_bytes()
    except OSError as err:
        raise CorruptState(f"{state_path} cannot be read ({err.strerror or err})") from None
    try:
        expected = _sidecar(state_path).read_text().split()[0]
    except FileNotFoundError:
        expected = None
    except (OSError, IndexError, ValueError):
        raise CorruptState(f"{_sidecar(state_path)} is unreadable or empty") from None
    if expected is not None and hashlib.sha256(blob).hexdigest() != expected.lower():
        raise CorruptState(f"sha256 of {state_path.name} differs from {_sidecar(state_path).name}")
    try:
        return torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    except Exception as err:  # UnpicklingError, EOFError, RuntimeError, ...: multi-line messages
        raise CorruptState(f"{state_path.name} does not load: {type(err).__name__}: {_first_line(err)}") from None
