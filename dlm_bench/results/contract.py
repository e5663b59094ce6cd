"""The results contract (docs/results.md): run.json + curve.csv per run directory, written atomically."""

from __future__ import annotations

import csv
import io
import json
import platform
import socket
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .atomic import atomic_write_text

SCHEMA = 1
STATUSES = ("ok", "failed", "diverged")


@dataclass
class RunRecord:
    status: str
    error: str | None
    paper: str
    experiment: str
    dataset: str
    task: str | None
    model: str
    objective: str
    estimator: str
    likelihood: str | None
    beta: float
    seed: int
    split: str
    train_size: int | None
    num_inducing: int | None
    hyperparameters: str  # joint | fixed
    method: str | None = None  # the one method label of every model kind (labels.method_label)
    metrics: dict = field(default_factory=dict)
    train: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    # dataset=csv: the target's labels as written -> the numbers trained on ({"no": 0, "yes": 1}); null otherwise
    label_map: dict | None = None
    schema: int = SCHEMA

    def to_dict(self) -> dict:
        d = asdict(self)
        return {"schema": d.pop("schema"), **d}


def read_status(run_dir: Path) -> str | None:
    """The status in `run_dir`/run.json, or None when there is none (or it cannot be read)."""
    try:
        return json.loads((Path(run_dir) / "run.json").read_text()).get("status")
    except (OSError, ValueError, AttributeError):
        return None


def write_run_json(run_dir: Path, record: RunRecord) -> Path:
    path = Path(run_dir) / "run.json"
    # allow_nan=False would reject a diverged run's NaN loss; NaN/inf become null instead.
    atomic_write_text(path, json.dumps(_finite_or_none(record.to_dict()), indent=2, sort_keys=False) + "\n")
    return path


def write_curve_csv(run_dir: Path, rows: list[dict]) -> Path:
    path = Path(run_dir) / "curve.csv"
    columns = list(dict.fromkeys(k for row in rows for k in row)) if rows else ["iteration", "wall_s", "loss"]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(path, buf.getvalue())
    return path


def _finite_or_none(obj):
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {k: _finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite_or_none(v) for v in obj]
    return obj


def git_sha() -> str | None:
    """The checkout's commit (+'-dirty' with uncommitted changes); None outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True, text=True, timeout=5
        ).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def env_info() -> dict:
    import gpytorch
    import torch

    from .. import __version__
    from .speed_probe import speed_probe_seconds

    return {
        "dlm_bench": __version__,
        "torch": torch.__version__,
        "gpytorch": gpytorch.__version__,
        "python": platform.python_version(),
        "git": git_sha(),
        "host": socket.gethostname(),
        # which GPU gave a CUDA run's timings (train.device says whether the run used it)
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        # this machine's single-core speed when the run was written: estimates scale its time to another machine
        "speed_probe_s": speed_probe_seconds(),
    }
