"""environ_set puts the variable back as it was: unset stays unset, a value comes back, also after an error."""

from __future__ import annotations

import os

import pytest

from dlm_bench.util.environ import environ_set

NAME = "DLM_BENCH_TEST_ENVIRON_SET"


def test_an_unset_variable_is_unset_again(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    with environ_set(NAME, "7"):
        assert os.environ[NAME] == "7"
    assert NAME not in os.environ


def test_an_earlier_value_comes_back_also_after_an_error(monkeypatch):
    monkeypatch.setenv(NAME, "old")
    with pytest.raises(RuntimeError), environ_set(NAME, "new"):
        assert os.environ[NAME] == "new"
        raise RuntimeError("job failed")
    assert os.environ[NAME] == "old"


def test_none_leaves_the_variable_as_it_is(monkeypatch):
    monkeypatch.setenv(NAME, "kept")
    with environ_set(NAME, None):
        assert os.environ[NAME] == "kept"
        os.environ[NAME] = "changed inside"
    assert os.environ[NAME] == "kept"
