"""Every registered dataset is a `dataset` option (generated from the registry) and every protocol has a config
file that the structured schema accepts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from dlm_bench.config.schema import DatasetConfig, ProtocolConfig
from dlm_bench.data import DATASETS, PROTOCOLS

CONF = Path(__file__).resolve().parents[3] / "conf"


def _fields(cls):
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("name", sorted(DATASETS) + ["csv"])
def test_every_registered_dataset_composes(name):
    from dlm_bench.sweeps.compose import compose_config

    assert compose_config([f"dataset={name}"]).dataset.name == name


def test_dataset_options_are_the_registry():
    from dlm_bench.config.schema import group_options

    assert group_options("dataset") == sorted([*DATASETS, "csv"])
    assert not (CONF / "dataset").exists()  # no hand-written copies that could drift from the registry


def test_protocol_yamls():
    files = sorted((CONF / "protocol").glob("*.yaml"))
    assert {yaml.safe_load(p.read_text())["name"] for p in files} == set(PROTOCOLS)
    for p in files:
        assert p.read_text().startswith("# ") and set(yaml.safe_load(p.read_text())) <= _fields(ProtocolConfig)
