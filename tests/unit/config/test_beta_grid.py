"""The DLM beta grid and the shared beta selection."""

import math

import numpy as np
import pandas as pd
import pytest

from dlm_bench.config.beta_grid import OutsideBetaGrid, beta_grid, resolve_beta, select_beta
from dlm_bench.config.schema import ObjectiveConfig


@pytest.mark.parametrize("n", [1, 339, 1000, 12345])
def test_beta_grid_is_n_over_powers_of_two_down_to_min(n):
    grid = beta_grid(n, 0.01)
    k_max = math.floor(math.log2(n / 0.01))  # closed form for the last index with n/2^k >= 0.01
    assert len(grid) == k_max + 1
    assert grid == [n / 2**k for k in range(k_max + 1)]
    assert grid[-1] >= 0.01 > grid[-1] / 2


def test_resolve_beta_by_index_and_outside_grid():
    cfg = ObjectiveConfig(beta=0.3, beta_index=None)
    assert resolve_beta(cfg, 100) == 0.3
    assert resolve_beta(ObjectiveConfig(beta_index=3), 100) == 12.5
    with pytest.raises(OutsideBetaGrid):
        resolve_beta(ObjectiveConfig(beta_index=14), 100)  # 100/2^14 = 0.0061 < 0.01


def test_select_beta_picks_validation_minimum_per_group():
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(3):
        for beta in (0.1, 1.0, 10.0):
            rows.append({"dataset": "d", "method": "m", "train_size": 50, "seed": seed, "beta": beta,
                         "status": "ok", "val_nll": rng.normal(), "test_nll": rng.normal()})
    rows.append({"dataset": "d", "method": "m", "train_size": 50, "seed": 0, "beta": 100.0,
                 "status": "failed", "val_nll": -99.0, "test_nll": 0.0})  # failed runs never win
    df = pd.DataFrame(rows)
    chosen = select_beta(df, metric="val_nll")
    assert len(chosen) == 3
    for seed in range(3):
        ok = df[(df.seed == seed) & (df.status == "ok")]
        expected = ok.loc[ok.val_nll.idxmin()]
        got = chosen[chosen.seed == seed].iloc[0]
        assert got.beta == expected.beta and got.test_nll == expected.test_nll


def test_methods_without_beta_run_once_in_a_beta_grid_sweep():
    from dlm_bench.config.beta_grid import apply_beta_grid_flag

    once = ObjectiveConfig(beta_index=0, beta_grid=False)
    apply_beta_grid_flag(once)
    assert once.beta_index is None and once.beta == 1.0
    with pytest.raises(OutsideBetaGrid):
        apply_beta_grid_flag(ObjectiveConfig(beta_index=3, beta_grid=False))
    swept = ObjectiveConfig(beta_index=3, beta_grid=True)
    apply_beta_grid_flag(swept)
    assert swept.beta_index == 3
