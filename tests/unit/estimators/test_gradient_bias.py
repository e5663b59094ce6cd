"""gradient_bias.bias_stats on hand-made estimates; the uPS/bMC gradient properties themselves are
tested in test_ups.py."""

import numpy as np
import pytest

from dlm_bench.estimators.gradient_bias import bias_stats


def test_bias_stats_by_hand():
    g = np.array([3.0, 4.0])  # ||g|| = 5
    d = np.array([[3.0, 4.0], [6.0, 8.0], [0.0, 5.0]])
    s = bias_stats("x", d, g)
    np.testing.assert_allclose(s.cond_i, [1.0, 2.0, 20.0 / 25.0])
    np.testing.assert_allclose(s.cond_ii, [1.0, 2.0, 1.0])
    np.testing.assert_allclose(s.bias, (d.mean(0) - g) / 5.0)
    assert s.bias_norm == pytest.approx(np.linalg.norm([0.0, 5.0 / 3.0]) / 5.0)
