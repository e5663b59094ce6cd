"""Per-run lock: two sweeps on one results directory never run the same grid point at once.

The lock is `<run_dir>/.lock`, created with O_CREAT | O_EXCL (atomic, also on NFS v3+), holding the holder's
identity: host, pid, the process start time (field 22 of /proc/<pid>/stat, clock ticks since boot) and the boot
id (/proc/sys/kernel/random/boot_id), and the sweep it belongs to (DLM_BENCH_SWEEP_ID, which a sweep sets for its
jobs, in its own process, joblib workers or SLURM tasks alike; absent outside a sweep). It is removed when the run
ends. A lock is stale, and taken over, when its holder is on this host and is gone: the pid is dead, or the pid now belongs to another process (another start
time), or the machine has rebooted since (another boot id). Lock files written before start time and boot id
were recorded ({"host", "pid"}) are read as before: held while that pid is alive. A lock from another host
cannot be checked and counts as held.
"""

from __future__ import annotations

import errno
import json
import os
import socket
from pathlib import Path

LOCK_NAME = ".lock"
SWEEP_ID_ENV = "DLM_BENCH_SWEEP_ID"


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists on this host (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def proc_start_time(pid: int) -> int | None:
    """Start time of process `pid` in clock ticks since boot (/proc/<pid>/stat field 22); None where there is
    no /proc (not Linux) or no such process."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
        # field 2 (comm) is in parentheses and may hold spaces or ')': count fields after the last ')'
        return int(stat[stat.rindex(")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


_BOOT_ID: list = []


def boot_id() -> str | None:
    """This boot's id (/proc/sys/kernel/random/boot_id), None where there is none."""
    if not _BOOT_ID:
        try:
            with open("/proc/sys/kernel/random/boot_id") as fh:
                _BOOT_ID.append(fh.read().strip() or None)
        except OSError:
            _BOOT_ID.append(None)
    return _BOOT_ID[0]


def identity(pid: int | None = None) -> dict:
    """What a lock records about its holder (this process by default)."""
    pid = os.getpid() if pid is None else int(pid)
    info = {"host": socket.gethostname(), "pid": pid, "start": proc_start_time(pid), "boot": boot_id()}
    if os.environ.get(SWEEP_ID_ENV):
        info["sweep"] = os.environ[SWEEP_ID_ENV]
    return info


def is_alive(info: dict) -> bool:
    """Whether the process a lock names still runs (only checkable on this host; another host's counts as alive).
    A dead pid, a pid reused by a process started at another time, or another boot id: not alive."""
    if str(info.get("host")) != socket.gethostname():
        return True
    pid = int(info["pid"])
    if pid <= 0 or not pid_alive(pid):
        return False
    boot, start = info.get("boot"), info.get("start")
    if boot is not None and boot_id() is not None and str(boot) != boot_id():
        return False  # written before a reboot: whatever runs under that pid now is another process
    if start is not None:
        now = proc_start_time(pid)
        if now is not None and now != int(start):
            return False  # the pid was reused
    return True


def read_lock(path: Path) -> dict:
    """The identity stored in a lock file (old files: host and pid only). Raises OSError / ValueError /
    KeyError / TypeError on a missing, empty or garbled file."""
    info = json.loads(Path(path).read_text())
    out = {"host": str(info["host"]), "pid": int(info["pid"])}
    for key in ("start", "boot", "sweep"):
        if info.get(key) is not None:
            out[key] = int(info[key]) if key == "start" else str(info[key])
    return out


def holder(run_dir: Path) -> dict | None:
    """Who holds the lock of `run_dir` ({"host", "pid"}, and "sweep" where the holder was a sweep's job), or None if
    it is free or stale (see is_alive)."""
    path = Path(run_dir) / LOCK_NAME
    try:
        info = read_lock(path)
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
    if not is_alive(info):
        return None
    return {key: info[key] for key in ("host", "pid", "sweep") if key in info}


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
                json.dump(identity(), fh)
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
