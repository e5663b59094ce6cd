"""dataset=csv: the user's own CSV / parquet file with the same preprocessing and protocols."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dlm_bench.data import DatasetError, load_from_config, make_split


def cfg(**kw):
    return SimpleNamespace(**{"name": "csv", "path": None, "target": None, "task": None, **kw})


@pytest.fixture
def table(tmp_path):
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "colour": ["red", "blue", "red", "green", "blue", "red"],
                       "y": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5], "label": ["no", "yes", "no", "yes", "yes", "no"]})
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_parquet(tmp_path / "t.parquet")
    return tmp_path


@pytest.mark.parametrize("fname", ["t.csv", "t.parquet"])
def test_regression_with_dummy_coding(table, fname):
    ds = load_from_config(cfg(path=str(table / fname), target="y", task="regression"))
    # 'label' and 'colour' are categorical: L-1 columns each, first sorted level is the zero code
    assert ds.feature_names == ["a", "colour=green", "colour=red", "label=yes"]
    np.testing.assert_array_equal(ds.X[:, 1], [0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(ds.X[:, 2], [1, 0, 1, 0, 0, 1])
    np.testing.assert_array_equal(ds.y, [0.5, 1.5, 2.5, 3.5, 4.5, 5.5])
    split = make_split(SimpleNamespace(name="pac", train_frac=0.5, train_size=None, normalize_x=True,
                                       normalize_y=True), ds, 0)
    assert len(split.train) == 3 and len(split.test) == 3


def test_binary_string_target(table):
    ds = load_from_config(cfg(path=str(table / "t.csv"), target="label", task="binary"))
    np.testing.assert_array_equal(ds.y, [0, 1, 0, 1, 1, 0])


@pytest.mark.parametrize("kw,match", [
    (dict(target="y", task="regression"), "needs dataset.path"),
    (dict(path="/no/such.csv", target="y", task="regression"), "no such file"),
    (dict(path="T", target="zzz", task="regression"), "not a column"),
    (dict(path="T", target="y", task="weird"), "not one of"),
    (dict(path="T", target="colour", task="binary"), "3 distinct values"),
    (dict(path="T", target="y", task="count"), "non-integer"),
])
def test_user_errors_are_one_line(table, kw, match):
    if kw.get("path") == "T":
        kw["path"] = str(table / "t.csv")
    with pytest.raises(DatasetError, match=match) as e:
        load_from_config(cfg(**kw))
    assert "\n" not in str(e.value)


def test_declared_categorical_dummy_codes_numbers_and_accepts_text(tmp_path):
    df = pd.DataFrame({"zip": [10, 20, 30, 10, 20, 30], "a": ["1", "2", "x", "4", "5", "6"],
                       "y": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]})
    df.to_csv(tmp_path / "t.csv", index=False)
    ds = load_from_config(cfg(path=str(tmp_path / "t.csv"), target="y", task="regression", categorical=["zip", "a"]))
    # by hand: zip levels 10 < 20 < 30 (first is the zero code), a's levels sorted as text: 1 2 4 5 6 x
    assert ds.feature_names == ["zip=20", "zip=30", "a=2", "a=4", "a=5", "a=6", "a=x"]
    np.testing.assert_array_equal(ds.X[:, 0], [0, 1, 0, 0, 1, 0])
    with pytest.raises(DatasetError, match=r"column 'a' mixes numbers and text \('x' in data row 3\)"):
        load_from_config(cfg(path=str(tmp_path / "t.csv"), target="y", task="regression", categorical=["zip"]))


def test_parquet_is_checked_like_csv(tmp_path):
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0.5, 0.5, 0.5, 0.5], "y": [2.0, 2.0, 2.0, 2.0]})
    df.to_parquet(tmp_path / "t.parquet")
    with pytest.raises(DatasetError, match="target column 'y' is constant"):
        load_from_config(cfg(path=str(tmp_path / "t.parquet"), target="y", task="regression"))
    df.assign(y=[0, 1, 1, 0], c=[0, 1, 1, 0]).to_parquet(tmp_path / "leak.parquet")
    with pytest.raises(DatasetError, match="column 'c' is a copy of the target 'y'"):
        load_from_config(cfg(path=str(tmp_path / "leak.parquet"), target="y", task="binary"))


@pytest.mark.parametrize("labels,expected", [([-1, 1, 1, -1], [0, 1, 1, 0]), ([True, False, True, True], [1, 0, 1, 1]),
                                             (["TRUE", "false", "True", "False"], [1, 0, 1, 0])])
def test_binary_labels_accepted_and_mapped_to_0_1(tmp_path, labels, expected):
    pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "y": labels}).to_csv(tmp_path / "t.csv", index=False)
    ds = load_from_config(cfg(path=str(tmp_path / "t.csv"), target="y", task="binary"))
    np.testing.assert_array_equal(ds.y, expected)
