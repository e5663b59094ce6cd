"""Every registered dataset and protocol has a config file that the structured schema accepts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from dlm_bench.config import DatasetConfig, ProtocolConfig
from dlm_bench.data import DATASETS, PROTOCOLS

CONF = Path(__file__).resolve().parents[3] / "conf"


def _fields(cls):
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("name", sorted(DATASETS) + ["csv"])
def test_dataset_yaml(name):
    path = CONF / "dataset" / f"{name}.yaml"
    text = path.read_text()
    assert text.startswith("# ") and yaml.safe_load(text)["name"] == name
    assert set(yaml.safe_load(text)) <= _fields(DatasetConfig)


def test_protocol_yamls():
    files = sorted((CONF / "protocol").glob("*.yaml"))
    assert {yaml.safe_load(p.read_text())["name"] for p in files} == set(PROTOCOLS)
    for p in files:
        assert p.read_text().startswith("# ") and set(yaml.safe_load(p.read_text())) <= _fields(ProtocolConfig)
