"""Settings whose default depends on the dataset's task, resolved before a run is named or built:
`model.likelihood: null` -> likelihoods.DEFAULT_FOR_TASK[task] (regression gaussian, binary probit,
count poisson_exp); `model.mean: auto` -> constant for binary tasks, zero otherwise. Resolving
before the run name is hashed keeps the names of existing regression runs unchanged."""

from __future__ import annotations

from omegaconf import DictConfig, open_dict

from ..config.schema import MeanFunction
from ..errors import ConfigError
from ..likelihoods import DEFAULT_FOR_TASK, LIKELIHOODS, TASK_LIKELIHOODS


def dataset_task(cfg: DictConfig) -> str:
    if cfg.dataset.name == "csv":
        return cfg.dataset.task or "regression"
    from ..data import get_spec

    return get_spec(cfg.dataset.name).task


def resolve_task_defaults(cfg: DictConfig) -> str:
    """Fill in model.likelihood and model.mean from the dataset's task (idempotent); returns the task."""
    task = dataset_task(cfg)
    with open_dict(cfg):
        if cfg.model.get("likelihood") is None:
            if task not in DEFAULT_FOR_TASK:
                raise ConfigError(f"dataset {cfg.dataset.name!r} is a {task} task; supported tasks: "
                                  f"{', '.join(DEFAULT_FOR_TASK)}")
            cfg.model.likelihood = DEFAULT_FOR_TASK[task]
        if cfg.model.mean is MeanFunction.auto or cfg.model.mean == "auto":
            cfg.model.mean = MeanFunction.constant if task == "binary" else MeanFunction.zero
    lik = cfg.model.likelihood
    if lik not in LIKELIHOODS:
        raise ConfigError(f"unknown model.likelihood {lik!r}; valid choices: {', '.join(LIKELIHOODS)}")
    if lik not in TASK_LIKELIHOODS.get(task, ()):
        raise ConfigError(f"model.likelihood={lik} does not fit dataset {cfg.dataset.name!r} ({task} task); "
                          f"use one of {', '.join(TASK_LIKELIHOODS.get(task, ())) or '(none)'}")
    return task
