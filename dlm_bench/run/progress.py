"""The one progress line per finished run (a sweep's jobs may run in other processes: each prints its own)."""

from __future__ import annotations

from pathlib import Path

from ..util.logline import log_line


def progress(run_dir: Path, status: str, metrics: dict, wall_s, error: str | None = None) -> None:
    shown = " ".join(f"{k}={metrics[k]:.4f}" for k in ("test_nll", "test_mse", "test_error") if k in metrics)
    extra = f" ({wall_s:.1f} s)" if wall_s is not None else ""
    log_line(" ".join(part for part in (status, run_dir.name, (shown + extra).strip(), error) if part))
