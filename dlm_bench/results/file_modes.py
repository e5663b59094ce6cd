"""File modes: files made with tempfile.mkstemp are 0600 whatever the umask; results and cache files
must be readable by whoever the umask lets read them (e.g. a group sharing a cluster directory)."""

from __future__ import annotations

import os
from pathlib import Path


def current_umask() -> int:
    """The process umask, read without changing it where possible (os.umask is a set-and-return,
    which would race with threads creating files)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def honour_umask(path, mode: int = 0o666) -> None:
    """chmod `path` to what open(path, 'w') would have created: mode & ~umask."""
    os.chmod(path, mode & ~current_umask())
