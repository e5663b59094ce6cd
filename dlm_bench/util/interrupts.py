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
_unit_depth = 0  # inside whole_units(): a loop whose checkpoint keeps finished units only


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


@contextmanager
def whole_units():
    """A loop whose checkpoint keeps only finished units (SGGPM's folds, sggpm/plugin.py) and is saved after each:
    a signal may act at once there and loses the current unit only, so nothing is held for it (holding SIGTERM or
    SLURM's warning for a unit of many minutes would only risk SIGKILL); the sweep's deadline (sweeps/deadline.py)
    asks `acts_at_once` and stops such a loop at once rather than waiting for its training to end."""
    global _unit_depth
    _unit_depth += 1
    try:
        yield
    finally:
        _unit_depth -= 1


def acts_at_once() -> bool:
    """Inside whole_units() and no deferred() block: a stop now loses no more than the unit being computed."""
    return _unit_depth > 0 and _depth == 0


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
