"""dlm_bench/results/speed_probe.py: the ratio that carries a run's seconds to another machine, and the probe itself."""

import torch

from dlm_bench.results.speed_probe import machine_ratio, speed_probe_seconds


def test_the_ratio_is_now_over_recorded_and_one_without_a_usable_probe():
    assert machine_ratio(0.002, 0.005) == 2.5
    assert machine_ratio(0.004, 0.001) == 0.25
    for recorded in (None, 0, -1.0, "n/a", [1]):
        assert machine_ratio(recorded, 0.003) == 1.0
    assert machine_ratio(0.002, 0.0) == 1.0


def test_the_probe_is_a_positive_time_and_leaves_the_thread_count_as_it_was():
    before = torch.get_num_threads()
    s = speed_probe_seconds()
    assert 0 < s < 5.0 and torch.get_num_threads() == before

