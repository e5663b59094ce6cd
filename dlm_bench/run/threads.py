"""torch's thread count for one run: small problems single threaded, large ones on the available cores.

    choose_threads(n_train, num_inducing, batch_size, override, cores) -> threads

Rule (docs/performance.md has the measurements): the per-iteration work of a sparse GP is about
B M^2 (B = minibatch size, or n_train for full batch; M = inducing points; M^3 for the Cholesky is
smaller whenever B >= M). Below WORK_CROSSOVER thread start-up and synchronisation cost more than they
save, so the run uses 1 thread; above it, all `cores` (the cores this job may use: a sweep job's
launcher.cpus, else os.cpu_count() / launcher.n_jobs; a plain `run`: os.cpu_count()).

Overrides, strongest first:
  1. OMP_NUM_THREADS set by the user (in the shell that started dlm-bench; `remember_user_setting`
     records it in DLM_BENCH_USER_OMP_NUM_THREADS so that sweep workers, whose OMP_NUM_THREADS
     joblib sets itself, still see the user's value);
  2. DLM_BENCH_THREADS=<k> (environment variable): k threads for every run and sweep job;
  3. the `override` argument (a caller's explicit choice);
  4. the rule above.
"""

from __future__ import annotations

import os

# B * M^2 above which more than one thread pays off (measured, docs/performance.md)
WORK_CROSSOVER = 5e9
USER_OMP = "DLM_BENCH_USER_OMP_NUM_THREADS"
ENV_OVERRIDE = "DLM_BENCH_THREADS"


def remember_user_setting() -> None:
    """Call once in the process the user started (the CLI), before any worker process is launched."""
    if USER_OMP not in os.environ:  # "" = the user did not set it (a worker's own OMP_NUM_THREADS is ignored)
        os.environ[USER_OMP] = os.environ.get("OMP_NUM_THREADS", "").strip()


def _positive_int(value, what: str) -> int | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        k = int(str(value).strip())
    except ValueError:
        k = 0
    if k < 1:
        from ..errors import ConfigError

        raise ConfigError(f"{what} must be a positive integer, got {value!r}")
    return k


def user_threads() -> int | None:
    """The user's explicit thread count (OMP_NUM_THREADS, then DLM_BENCH_THREADS), or None."""
    omp = os.environ.get(USER_OMP)
    if omp is None:  # not started through the CLI (library use): the environment as it is
        omp = os.environ.get("OMP_NUM_THREADS")
    try:  # OpenMP also allows a nested list "4,2": its first level is the count here
        k = _positive_int(omp.split(",")[0] if omp else omp, "OMP_NUM_THREADS")
    except ValueError:
        k = None  # not ours to validate: torch reads it too
    if k is not None:
        return k
    return _positive_int(os.environ.get(ENV_OVERRIDE), ENV_OVERRIDE)


def choose_threads(n_train: int, num_inducing: int | None, batch_size: int | None = None,
                   override: int | None = None, cores: int | None = None) -> int:
    user = user_threads()
    if user is not None:
        return user
    if override is not None:
        return _positive_int(override, "thread override")
    cores = max(1, cores if cores is not None else (os.cpu_count() or 1))
    b = n_train if batch_size is None else min(batch_size, n_train)
    m = num_inducing if num_inducing is not None else n_train  # exact GP / no inducing points: M = N
    work = b * m * m + m**3
    return 1 if work < WORK_CROSSOVER else cores


_CORES: int | None = None  # set by a sweep job (launcher.cpus or cpu_count / n_jobs)


def set_cores(cores: int | None) -> None:
    global _CORES
    _CORES = cores


def apply_threads(n_train: int, num_inducing: int | None, batch_size: int | None) -> int:
    """Set torch's thread count for this run (choose_threads with this process's cores); returns it."""
    import torch

    k = choose_threads(n_train, num_inducing, batch_size, cores=_CORES)
    if torch.get_num_threads() != k:
        torch.set_num_threads(k)
    return k
