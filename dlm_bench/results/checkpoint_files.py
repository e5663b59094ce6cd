"""The names of training checkpoint files and their cleanup, a leaf: the run harness removes a finished run's
checkpoints (run/record.py write_run) and its stale temporary files without importing the family that writes them
(training/checkpoint.py, which takes these names from here)."""

from __future__ import annotations

from pathlib import Path

CHECKPOINT = "checkpoint.pt"
PREFIX = "checkpoint"
TMP_PREFIX = ".checkpoint."  # temporary files of an interrupted save (removed by the next load)


def remove_checkpoints(directory: Path) -> None:
    """Every checkpoint (and interrupted save) in `directory`: called once its run.json is written."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    for path in list(directory.glob(f"{PREFIX}*.pt")) + list(directory.glob(f"{TMP_PREFIX}*.tmp")):
        path.unlink(missing_ok=True)
