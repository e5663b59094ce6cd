import os
from pathlib import Path

import pytest

from tests.helpers import cli_command  # noqa: F401 (moved to tests/helpers.py: import it from there)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DLM_BENCH_SHARED") or REPO.parent / "shared")  # ../shared beside the clone; env: elsewhere


@pytest.fixture
def shared_data() -> Path:
    """../shared/data beside the clone (CI has it; a user's clone does not)."""
    path = SHARED / "data"
    if not (path / "MANIFEST.tsv").is_file():
        pytest.skip(f"offline dataset mirror {path} not present (only CI and developer machines have ../shared)")
    return path


@pytest.fixture
def cli_env(tmp_path):
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="session")
def glm_tables(tmp_path_factory):
    """binary.csv and count.csv (tests/helpers.py write_glm_tables), written once per session."""
    from tests.helpers import write_glm_tables

    return write_glm_tables(tmp_path_factory.mktemp("glm"))


@pytest.fixture
def sigterm_handler():
    """dlm_bench's SIGTERM / SLURM-warning handlers installed for one test, the previous ones restored after."""
    from dlm_bench.run import signals

    previous = signals.install()
    yield
    signals.restore(previous)
    signals.reset()
