"""The `[dlm-bench] #k ...` lines a run prints to a sweep's log (a leaf: the run harness, the Trainer and the paper
packages print them). A sweep's jobs may run in other processes (joblib, SLURM): each prints its own, tagged with
its Hydra job number, the number Hydra's launch line gives the job's overrides under; the sweep's job passes it in
(`numbered`), so this leaf knows nothing of Hydra."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

HEARTBEAT_ENV = "DLM_BENCH_HEARTBEAT_S"  # seconds between trainer.progress=lines lines (default 600)


_JOB: list = [None]  # the number of the sweep job this process runs (None: not a sweep job)


@contextmanager
def numbered(job: int | None) -> Iterator[None]:
    """Lines printed inside carry '#job ' (a sweep's job: sweeps/job.py passes Hydra's job number)."""
    before, _JOB[0] = _JOB[0], job
    try:
        yield
    finally:
        _JOB[0] = before


def current_job() -> int | None:
    """The number of the sweep's job this process runs (None outside one)."""
    return _JOB[0]


def job_tag() -> str:
    """'#k ' inside a sweep's job k, '' outside one."""
    return "" if _JOB[0] is None else f"#{_JOB[0]} "


def log_line(text: str) -> None:
    print(f"[dlm-bench] {job_tag()}{text}", flush=True)


class Heartbeat:
    """trainer.progress=lines, a sweep's default: one `still training` line every `every_s` seconds of a training
    (iteration, loss, minutes), so a log shows that a long job (a batched beta group or a SAVIGP fit can train for
    hours) is alive and how far it is. Used by the Trainer, batched beta groups, SAVIGP's global iterations and
    SGGPM's folds. A bar would garble a log that parallel jobs share; a line per finished run comes only at the
    end. `clock` is injectable for tests."""

    def __init__(self, every_s: float, clock=time.perf_counter):
        if not every_s > 0:
            raise ValueError(f"{HEARTBEAT_ENV} must be > 0 seconds, got {every_s}")
        self.every_s, self.clock = float(every_s), clock
        self.start()

    @classmethod
    def from_env(cls) -> "Heartbeat":
        raw = os.environ.get(HEARTBEAT_ENV, "600")
        try:
            return cls(float(raw))
        except ValueError:
            raise ValueError(f"{HEARTBEAT_ENV} must be a number of seconds > 0, got {raw!r}") from None

    @classmethod
    def for_progress(cls, mode) -> "Heartbeat | None":
        """The heartbeat trainer.progress asks for (a Progress or its value): one for `lines`, else None."""
        return cls.from_env() if getattr(mode, "value", mode) == "lines" else None

    def start(self) -> None:
        self.t0 = self.clock()
        self.due = self.t0 + self.every_s

    def tick(self, iteration: int, max_iters: int, loss: float | None = None, note: str = "",
             unit: str = "iteration") -> None:
        now = self.clock()
        if now < self.due:
            return
        self.due = now + self.every_s
        shown = f", loss {loss:.6g}" if loss is not None else ""
        log_line(f"still training{note}: {unit} {iteration}/{max_iters}{shown}, {(now - self.t0) / 60:.1f} min")
