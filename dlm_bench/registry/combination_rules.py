"""A configuration checked against the declared capabilities (capabilities.py, registry.py): `check_combination`
is a loop over the rules below, each reading only declared fields, and the PAC-Bayes evaluation's own settings
(Reeb et al. 2018; here, not in pac/, because objectives/ imports pac/ and these rules read
objectives.pac_evaluation). Called by the validation pipeline (validation.py)."""

from __future__ import annotations

from omegaconf import DictConfig

from ..config.capabilities import EstimatorSpec, ModelSpec, ObjectiveSpec
from ..errors import ConfigError
from ..estimators import ESTIMATORS
from ..likelihoods import LIKELIHOODS
from ..objectives import OBJECTIVES, pac_evaluation
from .models import MODELS, lookup


def specs(cfg: DictConfig) -> tuple[ModelSpec, ObjectiveSpec, EstimatorSpec]:
    return (lookup(MODELS, "model", cfg.model.name), lookup(OBJECTIVES, "objective", cfg.objective.name),
            lookup(ESTIMATORS, "estimator", cfg.estimator.name))


# --- rules: each returns an error message or None ------------------------------------------------------------
def _objective_restricted(cfg, m, o, e):
    if o.models is not None and m.name not in o.models:
        return f"objective={o.name} trains model={' or '.join(o.models)} (got model={m.name})"


def _own_objective(cfg, m, o, e):
    fixed = cfg.objective.hyperparameters.value == "fixed"
    if m.own_objective and (o.name != "elbo" or cfg.objective.beta != 1.0 or fixed):
        return (f"model={m.name} {'is collapsed and ' if m.collapsed else ''}trains its own objective; leave objective at "
                f"elbo, beta=1, hyperparameters=joint (got objective={o.name}, beta={cfg.objective.beta:g}, "
                f"hyperparameters={cfg.objective.hyperparameters.value})")


def _model_objective(cfg, m, o, e):
    if o.name not in m.objectives:
        return f"model={m.name} is trained on {m.trained_on or 'other objectives'}: use objective={' or '.join(m.objectives)} (got {o.name})"


def _beta(cfg, m, o, e):
    if not o.has_beta and (cfg.objective.beta != 1.0 or cfg.objective.beta_index is not None):
        return f"objective={o.name} has no beta; leave objective.beta=1"


def _fixed(cfg, m, o, e):
    if cfg.objective.hyperparameters.value == "fixed" and not o.fixed_hyperparameters:
        ok = " or ".join(n for n, s in OBJECTIVES.items() if s.fixed_hyperparameters)
        return f"objective.hyperparameters=fixed applies to objective={ok}, got objective={o.name}"


def _full_batch_what(m, o) -> str:
    return f"model={m.name}" if m.full_batch_only else f"objective={o.name}"


def _estimator_applies(cfg, m, o, e):
    if e.name != "exact" and (m.full_batch_only or o.name not in e.mlls):
        return (f"estimator={e.name} estimates the likelihood term of model=svgp with objective={'|'.join(e.mlls)}; "
                f"{_full_batch_what(m, o)} is closed form, use estimator=exact")


def _num_samples(cfg, m, o, e):
    n = cfg.estimator.num_samples
    if e.sampling and (n is None or n < 1):
        return f"estimator.num_samples must be an integer >= 1 for estimator={e.name}, got {n}"
    if not e.sampling and n is not None:
        sampling = ", ".join(k for k, s in ESTIMATORS.items() if s.sampling)
        return f"estimator.num_samples applies to sampling estimators ({sampling}), not estimator={e.name}"


def _extra_keys(cfg, m, o, e):
    for key in sorted({k for spec in ESTIMATORS.values() for k in spec.extra_keys}):  # every declared estimator key
        v = cfg.estimator.get(key)
        if key in e.extra_keys:
            if v is not None and not v >= 0:
                return f"estimator.{key} must be >= 0, got {v}"
        elif v is not None:
            users = ", ".join(f"estimator={k}" for k, s in ESTIMATORS.items() if key in s.extra_keys)
            return f"estimator.{key} must be >= 0 and applies to {users} only (got {v}, estimator={e.name})"


def _likelihood(cfg, m, o, e):
    lik = cfg.model.get("likelihood")
    gaussian = lik in (None, "gaussian")
    if not gaussian and (m.gaussian_only or o.gaussian_only):
        return (f"{'model=' + m.name if m.gaussian_only else 'objective=' + o.name} is a Gaussian-likelihood method; "
                f"use model=svgp with objective=elbo|dlm for model.likelihood={lik}")
    if gaussian and e.non_gaussian_only:
        return (f"estimator={e.name} is implemented for the non-Gaussian likelihoods "
                f"({', '.join(k for k in LIKELIHOODS if k != 'gaussian')})")


def _full_batch(cfg, m, o, e):
    if (m.full_batch_only or o.full_batch_only) and cfg.trainer.batch_size is not None:
        return f"{_full_batch_what(m, o)} is a closed-form, full-batch method; use trainer.batch_size=null"


def _zero_mean(cfg, m, o, e):
    if (m.zero_mean_only or o.zero_mean_only) and cfg.model.mean.value != "zero":
        return f"{_full_batch_what(m, o)} is implemented for a zero mean function; use model.mean=zero"


def _pac_evaluable(cfg, m, o, e):
    if pac_evaluation(cfg) and not m.pac_evaluable:
        ok = "|".join(k for k, s in MODELS.items() if s.pac_evaluable)
        return f"the PAC-Bayes evaluation (eval.pac=true) applies to model={ok} (got model={m.name})"


def _sparse_q(cfg, m, o, e):
    if cfg.pac.sparse_q.value != "fitc" and m.name != "pac_sgp":
        return f"pac.sparse_q applies to model=pac_sgp (got model={m.name})"


def _pac_kernel(cfg, m, o, e):
    if pac_evaluation(cfg) and cfg.model.kernel.value != "rbf":
        return "the PAC-Bayes evaluation: the hyperparameter grid is defined for the SE kernel; use model.kernel=rbf"


RULES = (_objective_restricted, _own_objective, _model_objective, _beta, _pac_evaluable, _fixed, _estimator_applies,
         _num_samples, _extra_keys, _likelihood, _full_batch, _zero_mean, _sparse_q, _pac_kernel)


def check_combination(cfg: DictConfig) -> None:
    """The first declared constraint the configuration breaks, as one ConfigError line."""
    m, o, e = specs(cfg)
    for rule in RULES:
        message = rule(cfg, m, o, e)
        if message:
            raise ConfigError(message)
