"""The one atomic write of the package: results (run.json, curve.csv), checkpoints, the stage-1 store, the data
cache's .npz files and their sidecars.

Decided once:
* temporary file: tempfile.mkstemp in the target's own directory (same file system, so os.replace is atomic), named
  `{prefix}{random}.tmp` with prefix `.{target name}.` (hidden; a caller whose cleaner globs one prefix passes it,
  the checkpoints: results/checkpoint_files.TMP_PREFIX);
* fsync before the rename, always: a reader, a kill or a power cut sees the old file or the new one, never a torn
  one (the price, one flush per write, is small next to what these files hold);
* mode: what open(path, "w") would have made (0666 & ~umask), not mkstemp's 0600, so a group sharing a results
  directory or a cache can read them (results/file_modes.py);
* on any error, KeyboardInterrupt included, the temporary file is removed and the error re-raised.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable

from .file_modes import honour_umask


def atomic_write(path: Path | str, write: Callable[[BinaryIO], object], prefix: str | None = None) -> Path:
    """Create or replace `path` with what write(fh) writes to a binary file handle; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}." if prefix is None else prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        honour_umask(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: Path | str, text: str) -> Path:
    """atomic_write of UTF-8 text, line endings as given."""
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
