"""Settings whose default depends on the dataset's task, resolved before a run is named or built:
`model.likelihood: null` -> likelihoods.DEFAULT_FOR_TASK[task] (regression gaussian, binary probit,
count poisson_exp); `model.mean: auto` -> constant for binary tasks, zero otherwise; `model.num_inducing_rule` -> model.num_inducing
from the data set's size (num_inducing.py); the default protocol
(dlm_regression, config.yaml) -> the task's split (TASK_PROTOCOL: dlm_classification for binary, multiclass and
count data, as the DLM paper splits them), keeping any protocol.* value set beside it. Resolving before the run name
is hashed keeps the names of existing regression runs unchanged."""

from __future__ import annotations

import functools

from omegaconf import DictConfig, OmegaConf, open_dict

from ..config.schema import MeanFunction
from ..errors import ConfigError
from ..likelihoods import DEFAULT_FOR_TASK, LIKELIHOODS, TASK_LIKELIHOODS
from .num_inducing import resolve_num_inducing


def dataset_task(cfg: DictConfig) -> str:
    if cfg.dataset.name == "csv":
        return cfg.dataset.task or "regression"
    from ..data import get_spec

    return get_spec(cfg.dataset.name).task


# task -> the protocol (conf/protocol/<name>.yaml) a run on it gets when no protocol is chosen; a regression protocol
# on any other task is refused when chosen explicitly (registry/validation.py check_protocol_task)
TASK_PROTOCOL = {"binary": "dlm_classification", "multiclass": "dlm_classification", "count": "dlm_classification",
                 "ordinal": "dlm_classification"}
DEFAULT_PROTOCOL = "dlm_regression"  # conf/config.yaml's default


@functools.lru_cache(maxsize=None)
def protocol_file(option: str) -> dict:
    from ..config.schema import conf_dir

    return OmegaConf.to_container(OmegaConf.load(conf_dir() / "protocol" / f"{option}.yaml"))


def resolve_protocol(cfg: DictConfig, task: str) -> None:
    """The default regression split on a binary / count / multiclass dataset -> the task's split: every protocol.*
    value still at dlm_regression's default takes the task protocol's value (protocol.test_size=10 set by the user
    stays). Idempotent."""
    target = TASK_PROTOCOL.get(task)
    if target is None or cfg.protocol.name != DEFAULT_PROTOCOL:
        return
    default, wanted = protocol_file(DEFAULT_PROTOCOL), protocol_file(target)
    with open_dict(cfg):
        for key, value in wanted.items():
            if key == "name" or cfg.protocol.get(key) == default.get(key):
                cfg.protocol[key] = value


def resolve_task_defaults(cfg: DictConfig) -> str:
    """Fill in model.likelihood, model.mean (and M by a size rule) from the dataset (idempotent); returns the task."""
    task = dataset_task(cfg)
    resolve_protocol(cfg, task)
    with open_dict(cfg):
        if cfg.model.get("likelihood") is None:
            if task not in DEFAULT_FOR_TASK:
                raise ConfigError(f"dataset {cfg.dataset.name!r} is a {task} task; supported tasks: "
                                  f"{', '.join(DEFAULT_FOR_TASK)}")
            cfg.model.likelihood = DEFAULT_FOR_TASK[task]
        if cfg.model.mean is MeanFunction.auto or cfg.model.mean == "auto":
            cfg.model.mean = MeanFunction.constant if task == "binary" else MeanFunction.zero
    resolve_num_inducing(cfg)
    lik = cfg.model.likelihood
    if lik not in LIKELIHOODS:
        raise ConfigError(f"unknown model.likelihood {lik!r}; valid choices: {', '.join(LIKELIHOODS)}")
    if lik not in TASK_LIKELIHOODS.get(task, ()):
        raise ConfigError(f"model.likelihood={lik} does not fit dataset {cfg.dataset.name!r} ({task} task); "
                          f"use one of {', '.join(TASK_LIKELIHOODS.get(task, ())) or '(none)'}")
    return task
