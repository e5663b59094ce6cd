"""Protocols: disjoint splits of the specified sizes, deterministic per seed, different across
seeds, normalisation statistics from the training rows only."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from dlm_bench.data import Dataset, DatasetError, make_split

RNG = np.random.default_rng(1)


def cfg(name, **kw):
    base = dict(name=name, train_frac=0.67, val_frac=0.08, train_size=None, test_size=None, normalize_x=True,
                normalize_y=True)
    base.update(kw)
    return SimpleNamespace(**base)


def data(n, task="regression", d=3):
    return Dataset("toy", task, RNG.normal(3.0, 2.0, size=(n, d)), RNG.normal(10.0, 5.0, size=n))


def _disjoint(s):
    parts = [s.train, s.val, s.test]
    allidx = np.concatenate(parts)
    assert len(np.unique(allidx)) == len(allidx)


# (protocol config, N, expected (train, val, test) sizes computed by hand)
CASES = [
    (cfg("dlm_regression"), 1000, (670, 80, 250)),
    (cfg("dlm_regression", train_size=100), 1000, (100, 80, 250)),
    (cfg("dlm_regression", test_size=10000), 515345, (345281, 41228, 10000)),  # song
    (cfg("dlm_classification", val_frac=0.1, train_size=2000, test_size=1000), 7400, (2000, 740, 1000)),
    (cfg("dlm_classification", val_frac=0.1, train_size=2000, test_size=1000), 3772, (2000, 377, 1000)),
    (cfg("dlm_classification", val_frac=0.1, train_size=500, test_size=1000), 4000, (500, 400, 1000)),
    (cfg("dlm_classification", val_frac=0.0, train_size=None, test_size=100000), 300000, (200000, 0, 100000)),
    (cfg("pac", train_frac=0.8), 506, (405, 0, 101)),
]


@pytest.mark.parametrize("pc,n,sizes", CASES)
def test_sizes_disjoint_deterministic(pc, n, sizes):
    ds = data(n)
    a, b, c = make_split(pc, ds, 0), make_split(pc, ds, 0), make_split(pc, ds, 1)
    assert (len(a.train), len(a.val), len(a.test)) == sizes
    _disjoint(a)
    for x, y in ((a.train, b.train), (a.val, b.val), (a.test, b.test)):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.train, c.train) or not np.array_equal(a.test, c.test)


def test_classification_test_set_independent_of_train_size():
    ds = data(4000, task="count")
    small = make_split(cfg("dlm_classification", val_frac=0.1, train_size=100, test_size=1000), ds, 3)
    big = make_split(cfg("dlm_classification", val_frac=0.1, train_size=2000, test_size=1000), ds, 3)
    np.testing.assert_array_equal(small.test, big.test)
    assert set(small.train) <= set(big.train)


def test_normalisation_uses_training_rows_only():
    ds = data(500)
    s = make_split(cfg("dlm_regression"), ds, 7)
    np.testing.assert_allclose(s.x_stats.mean, ds.X[s.train].mean(axis=0))
    np.testing.assert_allclose(s.x_stats.std, ds.X[s.train].std(axis=0))
    np.testing.assert_allclose(s.y_stats.mean, ds.y[s.train].mean())
    assert not np.allclose(s.x_stats.mean, ds.X.mean(axis=0))  # not the full-data statistics
    z = s.y_stats.transform(ds.y[s.train])
    assert abs(z.mean()) < 1e-12 and abs(z.std() - 1) < 1e-12
    np.testing.assert_allclose(s.y_stats.inverse(z), ds.y[s.train])  # metrics in raw units


def test_targets_not_standardised_for_classification():
    ds = data(500, task="binary")
    ds.y = (ds.y > 10).astype(float)
    s = make_split(cfg("dlm_classification", val_frac=0.1, train_size=200, test_size=100), ds, 0)
    assert s.y_stats.mean == 0 and s.y_stats.std == 1


def test_savigp_fixed_splits_by_seed():
    ds = data(10)
    ds.fixed_splits = [(np.arange(0, 3), np.arange(3, 5)), (np.arange(5, 8), np.arange(8, 10))]
    s0, s1, s2 = (make_split(cfg("savigp"), ds, k) for k in (0, 1, 2))
    assert list(s0.train) == [0, 1, 2] and list(s1.test) == [8, 9] and list(s2.train) == [0, 1, 2]
    with pytest.raises(DatasetError, match="no upstream fixed splits"):
        make_split(cfg("savigp"), data(10), 0)


def test_bad_protocol_values_are_one_line_errors():
    for pc in (cfg("nope"), cfg("dlm_regression", train_size=10**6)):
        with pytest.raises(DatasetError) as e:
            make_split(pc, data(100), 0)
        assert "\n" not in str(e.value)


def test_pac_stride_is_every_stride_th_row_for_every_seed():
    """protocol.stride (Reeb et al. 2018 App. E: "every second one" of snelson): the shipped snelson file's rows
    0, 2, 4, ... train, the odd rows test, whatever the seed."""
    from pathlib import Path

    from dlm_bench.data import load_dataset

    ds = load_dataset("snelson")
    x_file = np.loadtxt(Path(__file__).parents[3] / "data" / "snelson" / "snelson_train_inputs.dat")
    for seed in (0, 1, 7):
        s = make_split(cfg("pac", stride=2, normalize_x=False, normalize_y=False), ds, seed)
        np.testing.assert_array_equal(ds.X[s.train, 0], x_file[::2])
        np.testing.assert_array_equal(np.sort(np.concatenate([s.train, s.test])), np.arange(200))
        assert len(s.val) == 0 and len(s.test) == 100
