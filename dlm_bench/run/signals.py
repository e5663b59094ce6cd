"""SIGTERM for every run and sweep job: the signal becomes `Terminated` (a KeyboardInterrupt), so a run unwinds
through its `finally` blocks and releases its locks; worker processes (joblib's loky workers) are stopped first,
while they can still unwind. A process that was stopped starts no further job (`check_not_terminated`).

Inside a training loop (util/interrupts.deferred) the signal waits for the end of the iteration, where the loop
writes its checkpoint (training/checkpoint.py) and then raises Terminated. SLURM's early warning, submitit's
preemption signal (USR2 by default; `--signal=USR2@<launcher.signal_delay_s>`: submitit checkpoints the job and
requeues it), is held the same way when submitit has a handler for it: the run saves its checkpoint first, then
submitit's handler requeues the job, whose rerun resumes from the checkpoint."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from ..errors import OutOfRequeues, Terminated
from ..util import interrupts

# set by SIGTERM in this process. A joblib worker that unwound a job on SIGTERM is handed the next job by loky
# before the parent's stop_workers() kills it; that job must not start (it would take locks it never releases)
_terminated = False


def reset() -> None:
    """A new sweep in this process (tests, notebooks) after an earlier one was stopped."""
    global _terminated
    _terminated = False


def check_not_terminated() -> None:
    if _terminated:
        raise Terminated("signal 15: this worker was stopped")


def raise_terminated(signum, frame):
    """The SIGTERM handler: Terminated now, or at the end of the training loop's iteration (after its checkpoint)."""
    if interrupts.hold(signum, _terminate):
        return
    _terminate(signum, frame)


def _terminate(signum, frame):
    global _terminated
    _terminated = True
    # workers first, while they can still unwind (release their run locks): joblib SIGKILLs them as soon
    # as the exception reaches its Parallel loop
    stop_workers(keep_trackers=True)  # joblib's shutdown still talks to its resource trackers
    raise Terminated(f"signal {signum}")


def _preempt_signal() -> int | None:
    """submitit's preemption / time-limit warning signal (SUBMITIT_PREEMPT_SIGNAL, default USR2)."""
    return getattr(signal, "SIG" + os.environ.get("SUBMITIT_PREEMPT_SIGNAL", "USR2"), None)


class _HeldWarning:
    """submitit's checkpoint-and-requeue handler, held while a training loop is mid-iteration (see the module
    docstring): the loop saves its checkpoint, then the handler requeues the job and exits."""

    def __init__(self, original):
        self.original = original

    def __call__(self, signum, frame):
        if not interrupts.hold(signum, self._requeue):
            self._requeue(signum, frame)

    def _requeue(self, signum, frame):
        """submitit's handler: requeues and exits (SystemExit), or raises UncompletedJobError when it does not
        requeue (launcher.max_requeues reached): then the run stops as by SIGTERM (checkpoint kept, no failed
        run.json) and the sweep job ends as deferred."""
        try:
            self.original(signum, frame)
        except Exception as err:
            raise OutOfRequeues(f"stopped at the SLURM time limit and not requeued ({str(err).strip()}); "
                                "its checkpoint is kept: the next sweep resumes it") from err


def install():
    """raise_terminated as this process's SIGTERM handler and, where submitit handles the preemption signal (a
    SLURM job), that handler held during training iterations (main thread only); returns the previous handlers
    for `restore` (None outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, raise_terminated)}
    warn = _preempt_signal()
    if warn is not None and warn != signal.SIGTERM:
        current = signal.getsignal(warn)
        if callable(current) and not isinstance(current, _HeldWarning):
            previous[warn] = signal.signal(warn, _HeldWarning(current))
    return previous


def restore(previous) -> None:
    """Undo `install` (its return value)."""
    for signum, handler in (previous or {}).items():
        signal.signal(signum, handler)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc; elsewhere none are found)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            ppid = int(text[text.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _is_tracker(pid: int) -> bool:
    try:
        return b"resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _zombie(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        return text[text.rindex(")") + 2] == "Z"
    except (OSError, ValueError, IndexError):
        return True


# a worker mid-training first ends its iteration and saves its checkpoint (fsync) before it unwinds: on a loaded
# machine that took over 3 s once (a run lock left behind, tests/integration/test_sweep_real_runs.py)
STOP_GRACE_S = 10.0


def stop_workers(grace_s: float = STOP_GRACE_S, keep_trackers: bool = False) -> list[int]:
    """SIGTERM every descendant (joblib's loky workers and resource trackers), SIGKILL what is left after
    `grace_s`. Loky workers are not in a process group of their own and outlive a killed parent otherwise."""
    pids = descendants(os.getpid())
    if keep_trackers:
        pids = [p for p in pids if not _is_tracker(p)]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        for pid in list(alive):
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:  # our own child: reap it
                    alive.remove(pid)
                    continue
            except ChildProcessError:  # not our child (grandchild): gone once /proc forgets it
                pass
            if not Path(f"/proc/{pid}").exists() or _zombie(pid):
                alive.remove(pid)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return pids
