"""Signals held back until a training loop's iteration ends, so the loop can first write a consistent checkpoint.

SIGTERM (a time limit, a preemption, `scancel`) and SLURM's early warning (`--signal`, submitit's USR2) stop a run.
Acted on at once, a signal that lands inside an optimizer step leaves the parameters and Adam's moments half
updated: no state worth saving. Inside `deferred()` (the Trainer's and the batched grid's loops) the signal
handlers of run/signals.py instead hand their action to `hold`; the loop calls `deliver()` at the end of each
iteration, after saving a checkpoint when `pending()` (training/checkpoint.py), and the held action runs there
(raise Terminated; submitit's checkpoint-and-requeue). A leaf module: the run harness installs the handlers, the
training loops (a lower layer) only ask and deliver.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

_depth = 0
_held: list[tuple[int, Callable]] = []  # (signum, action(signum, frame)) in arrival order


@contextmanager
def deferred():
    """Signals handed to `hold` inside this block wait for `deliver()` (re-entrant). Leaving the block delivers
    what is still held (the loop ended between its last deliver and the exit)."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _held:
            deliver()


def hold(signum: int, action: Callable) -> bool:
    """Inside `deferred()`: keep `action` for `deliver()` and return True; outside: False (act now)."""
    if _depth == 0:
        return False
    _held.append((signum, action))
    return True


def pending() -> bool:
    return bool(_held)


def deliver() -> None:
    """Run the held actions in arrival order (the first that raises ends the process's run, as it would have)."""
    while _held:
        signum, action = _held.pop(0)
        action(signum, None)
