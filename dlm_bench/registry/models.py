"""Every model kind a run can have, with the plugin the run harness calls for it (ModelSpec, capabilities.py), and
the registry queries the harness and the combination rules share: which spec, which objective label, which config
sections a model does not read, which method label. The model kinds are declared by the papers (dlm_bench/papers/,
discovered); the objective, estimator and likelihood registries live in their packages.
"""

from __future__ import annotations

from omegaconf import DictConfig

from ..config.capabilities import ModelSpec
from ..errors import ConfigError
from ..config.papers import model_specs
from ..results import labels

# every model kind of every declared paper (dlm_bench/papers/: discovered, none listed here)
MODELS = {s.name: s for s in model_specs()}


def lookup(registry: dict, group: str, name: str):
    """registry[name], or a ConfigError naming the valid choices of `group` (model, objective, estimator)."""
    if name not in registry:
        raise ConfigError(f"unknown {group}.name {name!r}; valid choices: {', '.join(registry)}")
    return registry[name]


def model_spec(cfg: DictConfig) -> ModelSpec:
    return lookup(MODELS, "model", cfg.model.name)


def name_label(cfg: DictConfig) -> str:
    """The label in a run's name: a model's own label (the LGM optimiser, the sggpm method, the SAVIGP posterior),
    else its own objective (FITC's is its own marginal likelihood, not the ELBO), else objective.name. Frozen:
    existing run names must stay valid."""
    spec = MODELS.get(cfg.model.name)
    if spec is not None and spec.label is not None:
        return spec.label(cfg)
    return (spec.own_objective if spec and spec.own_objective else None) or cfg.objective.name


def objective_label(cfg: DictConfig) -> str:
    """run.json's `objective`: what the run optimises (vlb / elbo for the own-loop models, whose name label is
    their variant), else the name label."""
    spec = MODELS.get(cfg.model.name)
    if spec is not None and spec.own_loop:
        return spec.own_objective
    return name_label(cfg)


def method_of(cfg: DictConfig, hyperparameters: str | None, estimator: str | None) -> str:
    """run.json's `method`: the one label every report uses (labels.method_label)."""
    spec = MODELS.get(cfg.model.name)
    if spec is not None and spec.own_loop:
        return labels.method_label(spec.name, None, None, None, variant=spec.label(cfg))
    return labels.method_label(cfg.model.name, objective_label(cfg), hyperparameters, estimator,
                               collapsed=bool(spec and spec.collapsed))


def paper_of(cfg: DictConfig) -> str:
    """run.json's `paper`: the paper a model belongs to (fp for the LGM models, sggpm, savigp, pac), else the
    configured `paper` (an experiment's, default dlm)."""
    spec = MODELS.get(cfg.model.name)
    return (spec.paper if spec is not None and spec.paper else None) or cfg.paper


def pac_evaluation(cfg: DictConfig) -> bool:
    """Whether a run gets the PAC-Bayes metrics (eval.pac, or an objective whose spec says pac_bound): the harness
    asks the registry, not the objectives package."""
    from ..objectives import pac_evaluation as objectives_pac_evaluation  # on use: the objectives import torch

    return objectives_pac_evaluation(cfg)


def unused_sections(cfg: DictConfig) -> set[str]:
    """Config sections owned by models other than the one that runs (left out of its run name)."""
    spec = MODELS.get(cfg.model.name)
    own = spec.config_section if spec is not None else None
    return {s.config_section for s in MODELS.values() if s.config_section and s.config_section != own}
