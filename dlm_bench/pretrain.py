"""Pretrain once: the stage-1 model of fixed-hyperparameter runs, stored in the results directory.

Every beta of a fixed-DLM / fixed sq-DLM grid adopts the same stage-1 model (same dataset, split, seed and
stage-1 settings). `PretrainStore.get_or_train` trains it once per key and keeps its state under
`<results_dir>/_pretrain/<key>/`:

    state.pt    the stage-1 bundle's state_dict (torch.save; bit-identical on load)
    meta.json   its TrainResult (status, iterations, converged, wall_s, final_loss) and the stage-1 config

The key is a hash of the stage-1 configuration (methods.pretrain_config) without what cannot change it
(beta, the method's estimator, where results go, progress bars). Concurrent sweeps: the first to need a key
takes `<key>/.lock` (O_CREAT | O_EXCL, dlm_bench/locks.py; a dead holder's lock is stale and taken over),
trains, and writes both files atomically (a temporary file, then os.replace; meta.json last, so a key with a
meta.json is complete); the others wait for meta.json and load it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf

from .train import TrainResult

STORE_DIR = "_pretrain"
# top-level settings that do not change the stage-1 model
_NOT_IN_KEY = ("results_dir", "run_dir", "launcher", "resume", "report", "experiment", "paper", "eval", "pac",
               "lgm", "savigp")


def pretrain_key(pre_cfg: DictConfig) -> str:
    """Hash of a stage-1 configuration (the output of methods.pretrain_config)."""
    d = OmegaConf.to_container(pre_cfg, resolve=True, enum_to_str=True)
    for k in _NOT_IN_KEY:
        d.pop(k, None)
    d.get("trainer", {}).pop("progress", None)
    d.get("trainer", {}).pop("track_every", None)
    if d.get("dataset", {}).get("name") == "csv":
        from . import data

        d["dataset"]["sha256"] = data.user_file_sha256(d["dataset"].get("path"))
    digest = hashlib.sha1(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]
    return f"{d['dataset']['name']}_{d['model']['name']}_seed{d['seed']}_{digest}"


def _atomic_write(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_RESULT_FIELDS = ("status", "error", "iterations", "epochs", "converged", "wall_s", "final_loss")


class PretrainStore:
    """Stage-1 states keyed by `pretrain_key`. `trainings` counts the stage-1 models this process trained."""

    def __init__(self, root: Path | str, poll_s: float = 0.5, timeout_s: float = 7 * 24 * 3600):
        self.root = Path(root) / STORE_DIR
        self.poll_s, self.timeout_s = poll_s, timeout_s
        self.trainings = 0

    def _paths(self, key: str) -> tuple[Path, Path, Path]:
        d = self.root / key
        return d, d / "state.pt", d / "meta.json"

    def _load(self, key: str, bundle: torch.nn.Module) -> TrainResult | None:
        d, state_path, meta_path = self._paths(key)
        try:
            meta = json.loads(meta_path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        result = TrainResult(**{k: meta[k] for k in _RESULT_FIELDS if k in meta})
        if result.status == "ok":
            state = torch.load(state_path, map_location="cpu", weights_only=True)
            bundle.load_state_dict(state)
        return result

    def get_or_train(self, key: str, bundle: torch.nn.Module, fit) -> tuple[TrainResult, bool]:
        """(the stage-1 TrainResult, reused?): load the stored state into `bundle`, or train it with `fit()`
        (which trains `bundle` in place and returns its TrainResult) and store it."""
        from .locks import RunLock

        d, state_path, meta_path = self._paths(key)
        deadline = time.monotonic() + self.timeout_s
        while True:
            result = self._load(key, bundle)
            if result is not None:
                return result, True
            lock = RunLock(d)
            if lock.acquire():
                try:
                    result = self._load(key, bundle)  # finished by another process before we locked
                    if result is not None:
                        return result, True
                    result = fit()
                    self.trainings += 1
                    if result.status == "ok":
                        state = {k: v.detach().cpu() for k, v in bundle.state_dict().items()}
                        _atomic_write(state_path, lambda fh: torch.save(state, fh))
                    meta = {k: getattr(result, k) for k in _RESULT_FIELDS}
                    _atomic_write(meta_path, lambda fh: fh.write(json.dumps(meta, indent=1).encode()))
                    return result, False
                finally:
                    lock.release()
            if time.monotonic() > deadline:
                raise TimeoutError(f"stage-1 model {key} is locked by another process ({d / '.lock'})")
            time.sleep(self.poll_s)
