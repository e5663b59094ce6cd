import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS: pytest_configure says why

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.helpers import cli_command  # noqa: F401,E402 (moved to tests/helpers.py: import it from there)

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DLM_BENCH_SHARED") or REPO.parent / "shared")  # ../shared beside the clone; env: elsewhere


def pytest_configure(config):
    """One thread for the numerics of each test process. pytest-xdist runs one worker per core, and torch's and the
    BLAS's default of one thread per core in every worker oversubscribed the 2 cores: OpenBLAS's spinning threads
    doubled the CPU of the numeric tests (tests/unit/lgm/test_frozen_hyperparameters.py + test_likelihood_accuracy.py,
    serial: 108 CPU s, 50 with one BLAS thread). OPENBLAS_NUM_THREADS is set before numpy or scipy load their BLAS
    (scipy loads its own copy later: threadpoolctl cannot limit a library not yet loaded); OMP_NUM_THREADS is left
    alone, so the CLI runs that tests start choose torch's threads by run/threads.py's rule, as a user's would."""
    import torch

    torch.set_num_threads(1)


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
