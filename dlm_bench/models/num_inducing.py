"""model.num_inducing_rule: M from the data set's size by a rule kept as data (num_inducing_rules.yaml), resolved
with the task defaults (task_defaults.py), so the run trains with, names and records (run.json) the integer M."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml
from omegaconf import DictConfig, open_dict

from ..config.schema import ModelConfig
from ..errors import ConfigError

# what an M the user did not give reads as: the schema's own default, not a copy of it
SCHEMA_DEFAULT_M = ModelConfig.__dataclass_fields__["num_inducing"].default


@functools.lru_cache(maxsize=None)
def rules() -> dict:
    with open(Path(__file__).with_name("num_inducing_rules.yaml")) as fh:
        return yaml.safe_load(fh)


def m_for_size(rule: str, n_rows: int) -> int:
    """M = clip(floor(n_rows / rows_per_point), min, max) under the named rule."""
    if rule not in rules():
        raise ConfigError(f"unknown model.num_inducing_rule {rule!r}; valid choices: {', '.join(rules())} or null")
    r = rules()[rule]
    return int(min(r["max"], max(r["min"], n_rows // r["rows_per_point"])))


def resolve_num_inducing(cfg: DictConfig) -> None:
    """model.num_inducing from model.num_inducing_rule and the data set's row count (idempotent: the rule stays in
    the config, M is recomputed from the same file). A hand-given M beside a rule is refused rather than silently
    replaced (an M of 50, the schema default, cannot be told apart from none)."""
    rule = cfg.model.get("num_inducing_rule")
    if rule is None:
        return
    from ..data.api import dataset_size

    m = m_for_size(rule, dataset_size(cfg.dataset))
    given = cfg.model.num_inducing
    if given not in (SCHEMA_DEFAULT_M, m):
        raise ConfigError(f"model.num_inducing={given} and model.num_inducing_rule={rule} (M = {m} for this data) "
                          f"both given; add model.num_inducing_rule=null to train with M = {given}")
    with open_dict(cfg):
        cfg.model.num_inducing = m
