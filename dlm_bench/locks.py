"""Per-run lock: two sweeps on one results directory never run the same grid point at once.

The lock is `<run_dir>/.lock`, created with O_CREAT | O_EXCL (atomic, also on NFS v3+), holding the
holder's host and pid. It is removed when the run ends; a lock whose holder (same host) is gone is
stale and taken over. A lock from another host cannot be checked and counts as held.
"""

from __future__ import annotations

import errno
import json
import os
import socket
from pathlib import Path

LOCK_NAME = ".lock"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def holder(run_dir: Path) -> dict | None:
    """Who holds the lock of `run_dir` ({"host", "pid"}), or None if it is free or stale."""
    path = Path(run_dir) / LOCK_NAME
    try:
        info = json.loads(path.read_text())
        host, pid = str(info["host"]), int(info["pid"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        # being written right now (created, not yet filled) or garbage: treat an empty/garbled lock
        # older than a few seconds as stale, a fresh one as held
        try:
            import time

            return None if time.time() - path.stat().st_mtime > 10 else {"host": "?", "pid": -1}
        except OSError:
            return None
    if host == socket.gethostname() and not _pid_alive(pid):
        return None
    return {"host": host, "pid": pid}


class RunLock:
    """`with RunLock(run_dir) as acquired:` -- acquired is False when another live process holds it."""

    def __init__(self, run_dir: Path):
        self.path = Path(run_dir) / LOCK_NAME
        self.acquired = False
        self.created_dir = False

    def acquire(self) -> bool:
        for _ in range(3):
            if not self.path.parent.is_dir():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.created_dir = True
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
            except FileNotFoundError:  # another holder's release removed the empty directory meanwhile
                continue
            except FileExistsError:
                if holder(self.path.parent) is not None:
                    return False
                # stale: remove and try again (another taker may win the race; O_EXCL decides)
                try:
                    self.path.unlink()
                except FileNotFoundError:
                    pass
                continue
            with os.fdopen(fd, "w") as fh:
                json.dump({"host": socket.gethostname(), "pid": os.getpid()}, fh)
            self.acquired = True
            return True
        return False

    def release(self) -> None:
        if self.acquired:
            try:
                self.path.unlink()
            except OSError as err:
                if err.errno != errno.ENOENT:
                    raise
            self.acquired = False
            if self.created_dir:
                # a run that wrote nothing (a point beyond the beta grid, a batched group stopped by
                # SIGTERM) leaves no empty run directory behind; rmdir refuses a directory with files in it
                try:
                    self.path.parent.rmdir()
                except OSError:
                    pass

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
