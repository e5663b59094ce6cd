"""Training checkpoints: a long run killed part-way (SIGTERM at a SLURM time limit or preemption, SIGKILL, a power
cut) resumes where its last checkpoint left it and ends with the metrics an uninterrupted run has, to the digit on
CPU for a fixed seed.

What a checkpoint holds (Trainer.fit; the batched grid's loop, models/batched_svgp.py, holds the same per member):
the module's state_dict (model, likelihood and every buffer, e.g. GPyTorch's variational_params_initialized), the
optimizer's state_dict (Adam's moments and step counts; L-BFGS's history), the RNG states (torch CPU and CUDA,
numpy's global one, Python's `random`, the trainer's minibatch generator), the curve so far, the iteration and epoch
counters, the stopping rule's window, the training time spent so far, and `progress`: the fraction of the run's
training budget done (its iterations over trainer.max_iters, SAVIGP's over savigp.max_iter, SGGPM's folds over its
folds), written by whoever saves so that a reader (the sweep's --estimate) needs no family's counters. Everything else a run does before its
training loop (seeding, the data split, building the model, stage 1) is deterministic, so a rerun of the same point
redoes it and then loads the checkpoint over it.

Files: `<run dir>/checkpoint.pt` (a fixed run's stage 1: `checkpoint-stage1.pt`); a batched group's in its group
directory, `<results>/<experiment>/.beta_batch/<run name of index 0>/checkpoint-<first k>-<last k>.pt`. Written
every `trainer.checkpoint_every_s` seconds of training (default 300; 0: never), and at once when SIGTERM or SLURM's
warning signal arrives (run/signals.py holds it to the end of the iteration), atomically: torch.save to a temporary
file in the same directory, fsync, os.replace. run/record.write_run removes a run directory's checkpoints once
run.json is written; a group removes its own once every member's run.json is. Minibatch training saves at epoch
ends only.

Identity: every checkpoint records the run it belongs to, `{"run": run name, "config": hash of the configuration}`
(run/naming.py checkpoint_identity; a batched group adds its member indices, SGGPM its fold count). A checkpoint is
ignored, with one line on stderr, and the run starts over from its fresh state, when it does not load (a disk error,
garbage bytes), is not a dlm-bench checkpoint (a bare tensor), belongs to another run (another seed's file put in
this run's place), or does not fit this run's model (`mismatch`: M = 20 saved, M = 50 built). A checkpoint written
before identities were recorded has none and is resumed when it fits.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from ..results.atomic import atomic_write
from ..results.checkpoint_files import CHECKPOINT, PREFIX, TMP_PREFIX  # noqa: F401 (CHECKPOINT: the plugins' name for it)
FORMAT = 1
IDENTITY_KEYS = ("run", "config")  # what run/naming.py checkpoint_identity records


def rng_state() -> dict:
    """Every global RNG a training step may draw from (bMC samples: torch; inits: numpy, random)."""
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if state.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class Checkpoint:
    """One checkpoint file: `due()` every `every_s` seconds, `save(state)` atomically, `load()` (None: none or
    unreadable), `remove()`. `every_s` 0 or None: never due (a signal still saves)."""

    def __init__(self, path: Path | str, every_s: float | None, identity: dict | None = None):
        self.path = Path(path)
        self.every_s = float(every_s or 0)
        self.identity = identity or {}  # must match on load: run name and config hash (+ a group's member indices)
        self._last = time.monotonic()

    @property
    def enabled(self) -> bool:
        return self.every_s > 0

    def sibling(self, tag: str) -> "Checkpoint":
        """Another stage's checkpoint next to this one (a fixed run's stage 1: checkpoint-stage1.pt)."""
        return Checkpoint(self.path.with_name(f"{PREFIX}-{tag}.pt"), self.every_s, self.identity)

    def due(self) -> bool:
        return self.enabled and time.monotonic() - self._last >= self.every_s

    def save(self, state: dict, progress: float) -> None:
        """torch.save to a temporary file in the same directory, fsync, os.replace: a reader (or a kill) sees the
        old checkpoint or the new one, never a torn one. progress: the fraction of training done (0..1)."""
        record = {"format": FORMAT, "identity": self.identity, "progress": min(max(float(progress), 0.0), 1.0), **state}
        atomic_write(self.path, lambda fh: torch.save(record, fh), prefix=TMP_PREFIX)
        self._last = time.monotonic()

    def ignore(self, why: str) -> None:
        """One line on stderr: this checkpoint is not resumed (why), the run trains from its fresh state."""
        print(f"dlm-bench: ignoring checkpoint {self.path}: {why}; training starts over", file=sys.stderr)

    def _foreign(self, saved) -> str | None:
        """Why a saved identity is not this run's, or None. One without run and config (written before they were
        recorded) is compared on its other fields only (a batched group's members)."""
        if not isinstance(saved, dict):
            return "it records no identity"
        mine = self.identity if "run" in saved or "config" in saved else {
            k: v for k, v in self.identity.items() if k not in IDENTITY_KEYS}
        if saved == mine:
            return None
        if saved.get("run") != self.identity.get("run") and "run" in saved:
            return f"it belongs to run {saved['run']}, not {self.identity.get('run')}"
        if saved.get("config") != self.identity.get("config") and "config" in saved:
            return f"it was written with another configuration (hash {saved['config']}, this run's {self.identity.get('config')})"
        return f"it belongs to another set of members ({saved}, this run's {mine})"

    def load(self) -> dict | None:
        """The saved state, or None (no file; one that does not load, is not a checkpoint or belongs to another run:
        said on stderr). Leftover temporary files of an interrupted save are removed first."""
        for tmp in self.path.parent.glob(f"{TMP_PREFIX}*.tmp") if self.path.parent.is_dir() else []:
            tmp.unlink(missing_ok=True)
        if not self.path.exists():
            return None
        try:
            # weights_only=False: the file is this run's own (RNG states are tuples and numpy arrays)
            state = torch.load(self.path, map_location="cpu", weights_only=False)
        except Exception as err:  # a truncated or corrupt file: start over rather than fail the run
            self.ignore(f"it does not load ({type(err).__name__})")
            return None
        if not isinstance(state, dict) or "format" not in state:
            self.ignore(f"it holds a {type(state).__name__}, not a dlm-bench checkpoint")
            return None
        if state["format"] != FORMAT:
            self.ignore(f"it has format {state['format']!r}, this version reads {FORMAT}")
            return None
        why = self._foreign(state.get("identity"))
        if why is not None:
            self.ignore(why)
            return None
        return state

    def fits(self, module: torch.nn.Module, saved: dict) -> bool:
        """Whether a saved state_dict fits `module` (same entries, same shapes); if not, said on stderr (`ignore`).
        Checked before loading: load_state_dict copies the entries that fit before it raises on the others."""
        why = mismatch(module, saved)
        if why is not None:
            self.ignore(why)
        return why is None

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def mismatch(module: torch.nn.Module, saved) -> str | None:
    """Why state_dict `saved` does not fit `module` (another model's entries or shapes), or None."""
    if not isinstance(saved, dict):
        return f"its model state is a {type(saved).__name__}"
    own = module.state_dict()
    missing, extra = sorted(set(own) - set(saved)), sorted(set(saved) - set(own))
    if missing or extra:
        return f"it holds another model ({len(missing)} entries missing, {len(extra)} unexpected, e.g. {(missing or extra)[0]})"
    for key, value in own.items():
        shape = getattr(saved[key], "shape", None)
        if shape is not None and tuple(shape) != tuple(value.shape):
            return f"it does not fit this model ({key} has shape {list(shape)}, this run's {list(value.shape)})"
    return None
