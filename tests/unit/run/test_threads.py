"""dlm_bench/run/threads.py: the thread-count rule and its overrides (user OMP_NUM_THREADS > DLM_BENCH_THREADS >
explicit override > B M^2 rule)."""

import pytest
import torch

from dlm_bench.errors import ConfigError
from dlm_bench.run import threads


@pytest.fixture
def clean_env(monkeypatch):
    for var in ("OMP_NUM_THREADS", threads.USER_OMP, threads.ENV_OVERRIDE):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_rule_small_is_single_threaded_large_uses_the_cores(clean_env):
    assert threads.choose_threads(455, 100, None, cores=8) == 1  # boston default
    assert threads.choose_threads(1000, 50, None, cores=8) == 1
    assert threads.choose_threads(100_000, 500, 1000, cores=8) == 1  # minibatch 1000 x 500^2 = 2.5e8
    assert threads.choose_threads(100_000, 500, None, cores=8) == 8  # 2.5e10
    assert threads.choose_threads(3000, None, None, cores=4) == 4  # exact GP: N^3 = 2.7e10


def test_overrides(clean_env):
    clean_env.setenv(threads.ENV_OVERRIDE, "3")
    assert threads.choose_threads(10, 5, cores=8) == 3
    clean_env.setenv("OMP_NUM_THREADS", "2")  # set by the user: wins
    assert threads.choose_threads(10, 5, cores=8) == 2
    clean_env.setenv(threads.USER_OMP, "")  # the CLI saw no user OMP_NUM_THREADS: a worker's own one is ignored
    assert threads.choose_threads(10, 5, cores=8) == 3
    clean_env.delenv(threads.ENV_OVERRIDE)
    assert threads.choose_threads(10, 5, override=5, cores=8) == 5
    clean_env.setenv(threads.ENV_OVERRIDE, "zero")
    with pytest.raises(ConfigError, match="DLM_BENCH_THREADS"):
        threads.choose_threads(10, 5)


def test_cli_records_the_user_setting_for_workers(clean_env):
    clean_env.setenv("OMP_NUM_THREADS", "1")
    threads.remember_user_setting()
    clean_env.setenv("OMP_NUM_THREADS", "7")  # what joblib sets in a worker
    assert threads.user_threads() == 1


def test_apply_threads_sets_torch(clean_env):
    before = torch.get_num_threads()
    try:
        threads.set_cores(2)
        assert threads.apply_threads(100, 10, None) == 1 and torch.get_num_threads() == 1
        assert threads.apply_threads(10**6, 1000, None) == 2 and torch.get_num_threads() == 2
    finally:
        threads.set_cores(None)
        torch.set_num_threads(before)
