"""Every model kind a run can have, with the plugin the run harness calls for it (ModelSpec, capabilities.py), and
the registry queries the harness and the combination rules share: which spec, which objective label, which config
sections a model does not read, which method label. The objective, estimator and likelihood registries live in
their packages; this module only connects model names to the model families and papers below it.
"""

from __future__ import annotations

from omegaconf import DictConfig

from ..config.capabilities import ModelSpec
from ..errors import ConfigError
from ..fp import plugin as lgm_plugin
from ..models import plugin as trainer_plugin
from ..models.beta_group import BETA_GROUP
from ..models.fixed import resolve_auto_pretrain
from ..models.task_defaults import resolve_task_defaults
from ..objectives import pac_evaluation as _pac_evaluation
from ..results import labels
from ..savigp import plugin as savigp_plugin
from ..sggpm import plugin as sggpm_plugin

_PAC = ("pac_kl", "pac_sqrt")
_TRAINER = {"execute": trainer_plugin.execute, "check_config": trainer_plugin.check_config,
            "check_data": trainer_plugin.check_data, "checkpoints": True,
            "task_defaults": resolve_task_defaults, "name_defaults": resolve_auto_pretrain}
MODELS = {s.name: s for s in (
    ModelSpec("svgp", ("elbo", "dlm", "sq_dlm"), **_TRAINER, beta_group=BETA_GROUP,
              description="sparse variational GP (Hensman et al. 2015), any likelihood and estimator"),
    ModelSpec("sgpr", ("elbo",), **_TRAINER, own_objective="elbo", collapsed=True, gaussian_only=True,
              full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
              description="collapsed SGPR / VFE (Titsias 2009)"),
    ModelSpec("fitc", ("elbo",), **_TRAINER, own_objective="fitc", collapsed=True, gaussian_only=True,
              full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
              description="FITC (Snelson & Ghahramani 2006), collapsed"),
    ModelSpec("exact_gp", ("elbo",), **_TRAINER, own_objective="mll", gaussian_only=True,
              full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
              description="full GP on its marginal likelihood"),
    ModelSpec("pac_gp", _PAC, **_TRAINER, gaussian_only=True, full_batch_only=True, zero_mean_only=True,
              pac_evaluable=True, trained_on="a PAC-Bayes bound", paper="pac", description="full PAC-GP (Reeb et al. 2018)"),
    ModelSpec("pac_sgp", _PAC, **_TRAINER, gaussian_only=True, full_batch_only=True, zero_mean_only=True,
              pac_evaluable=True, trained_on="a PAC-Bayes bound", paper="pac",
              description="sparse PAC-SGP (Reeb et al. 2018)"),
    # Sheth & Khardon (2016): the extended LGM optimised by GRAD / FPb / FPi (lgm.*), with its own fit loop
    *(ModelSpec(name, ("elbo",), execute=lgm_plugin.execute, check_config=lgm_plugin.check_config,
                check_data=lgm_plugin.check_data, own_loop=True, own_objective="vlb", paper="fp",
                label=lambda cfg: cfg.lgm.optimizer, config_section="lgm", description=f"extended LGM, {kind} (dlm_bench/lgm)")
      for name, kind in (("lgm_glm", "GLM"), ("lgm_gp", "full GP"), ("lgm_sparse", "sparse GP, fixed inducing inputs"))),
    # Dezfouli & Bonilla (2015): Q latent GPs, FG / MoG posteriors, black-box likelihoods (savigp.*)
    ModelSpec("savigp", ("elbo",), execute=savigp_plugin.execute, check_config=savigp_plugin.check_config,
              check_data=savigp_plugin.check_data, own_loop=True, own_objective="elbo", paper="savigp",
              config_section="savigp", checkpoints=True, fit_size=savigp_plugin.fit_size,
              size_keys=("savigp.num_inducing", "savigp.sparsity_factor"),
              label=lambda cfg: f"{cfg.savigp.posterior}{cfg.savigp.components if cfg.savigp.posterior == 'mog' else ''}",
              description="SAVIGP (dlm_bench/savigp)"),
    # Sheth, Wang & Khardon (2015): sparse / SoD GGPM, Laplace, grad, dual, FP (sggpm.*)
    ModelSpec("sggpm", ("elbo",), execute=sggpm_plugin.execute, check_config=sggpm_plugin.check_config,
              check_data=sggpm_plugin.check_data, own_loop=True, own_objective="vlb", paper="sggpm",
              config_section="sggpm", checkpoints=True, fit_size=sggpm_plugin.fit_size, size_keys=("sggpm.size_index",),
              label=lambda cfg: cfg.sggpm.method, description="sparse variational GGPM (dlm_bench/sggpm)"),
)}


def model_spec(cfg: DictConfig) -> ModelSpec:
    name = cfg.model.name
    if name not in MODELS:
        raise ConfigError(f"unknown model.name {name!r}; valid choices: {', '.join(MODELS)}")
    return MODELS[name]


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
    return _pac_evaluation(cfg)


def unused_sections(cfg: DictConfig) -> set[str]:
    """Config sections owned by models other than the one that runs (left out of its run name)."""
    spec = MODELS.get(cfg.model.name)
    own = spec.config_section if spec is not None else None
    return {s.config_section for s in MODELS.values() if s.config_section and s.config_section != own}
