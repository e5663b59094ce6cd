import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared_data() -> Path:
    """../shared/data beside the clone (CI has it; a user's clone does not)."""
    path = SHARED / "data"
    if not (path / "MANIFEST.tsv").is_file():
        pytest.skip(f"offline dataset mirror {path} not present (only CI and developer machines have ../shared)")
    return path


def cli_command() -> list[str]:
    """`dlm-bench` from the venv running the tests."""
    exe = Path(sys.executable).parent / "dlm-bench"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dlm_bench.cli"]


@pytest.fixture
def cli_env(tmp_path):
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env
