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
run.json is written; a group removes its own once every member's run.json is. A checkpoint that does not load (a
disk error) is reported in one line and ignored: the run starts over. Minibatch training saves at epoch ends only.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

from ..results.atomic import atomic_write

CHECKPOINT = "checkpoint.pt"
PREFIX = "checkpoint"
TMP_PREFIX = ".checkpoint."  # temporary files of an interrupted save (removed by the next load)
FORMAT = 1


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
        self.identity = identity or {}  # must match on load (a batched group: its member indices)
        self._last = time.monotonic()
        self.saves = 0

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
        self.saves += 1

    def load(self) -> dict | None:
        """The saved state, or None (no file; one that does not load or belongs to other members: said on stderr).
        Leftover temporary files of an interrupted save are removed first."""
        for tmp in self.path.parent.glob(f"{TMP_PREFIX}*.tmp") if self.path.parent.is_dir() else []:
            tmp.unlink(missing_ok=True)
        if not self.path.exists():
            return None
        try:
            # weights_only=False: the file is this run's own (RNG states are tuples and numpy arrays)
            state = torch.load(self.path, map_location="cpu", weights_only=False)
        except Exception as err:  # a truncated or corrupt file: start over rather than fail the run
            print(f"dlm-bench: ignoring unreadable checkpoint {self.path} ({type(err).__name__}); training "
                  "starts over", file=sys.stderr)
            return None
        if state.get("format") != FORMAT or state.get("identity") != self.identity:
            print(f"dlm-bench: ignoring checkpoint {self.path}: it belongs to another set of members or format; "
                  "training starts over", file=sys.stderr)
            return None
        return state

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def remove_checkpoints(directory: Path) -> None:
    """Every checkpoint (and interrupted save) in `directory`: called once its run.json is written."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    for path in list(directory.glob(f"{PREFIX}*.pt")) + list(directory.glob(f"{TMP_PREFIX}*.tmp")):
        path.unlink(missing_ok=True)
