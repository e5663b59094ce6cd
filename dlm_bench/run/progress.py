"""The one progress line per finished run (a sweep's jobs may run in other processes: each prints its own)."""

from __future__ import annotations

from pathlib import Path


def progress(run_dir: Path, status: str, metrics: dict, wall_s, error: str | None = None) -> None:
    try:
        from hydra.core.hydra_config import HydraConfig

        num = f"#{HydraConfig.get().job.num} "
    except Exception:  # outside a Hydra job
        num = ""
    shown = " ".join(f"{k}={metrics[k]:.4f}" for k in ("test_nll", "test_mse", "test_error") if k in metrics)
    extra = f" ({wall_s:.1f} s)" if wall_s is not None else ""
    print(f"[dlm-bench] {num}{status} {run_dir.name} {shown}{extra}{' ' + error if error else ''}", flush=True)
