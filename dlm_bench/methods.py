"""Which bundle a configuration trains, which combinations make sense, and the fixed-hyperparameter
procedure (Wei et al. 2021, sec. 6 and supplement): train SVGP fully (ELBO, beta=1), copy its
hyperparameters and Z into the method's bundle, freeze them, learn the variational part from scratch."""

from __future__ import annotations

import copy
import time

import torch
from omegaconf import DictConfig, read_write

from .config import Hyperparameters, MeanFunction
from .errors import ConfigError
from .estimators import ESTIMATORS, SAMPLING
from .models import MODELS, ModelBundle, build_sq_dlm
from .objectives import OBJECTIVES
from .train import TrainResult

COLLAPSED = ("sgpr", "fitc")  # closed-form q(u), own objective
OWN_OBJECTIVE = COLLAPSED + ("exact_gp",)  # trained on their own (approximate) marginal likelihood
PAC_MODELS = ("pac_gp", "pac_sgp")  # trained on a PAC-Bayes bound (Reeb et al. 2018)
PAC_OBJECTIVES = ("pac_kl", "pac_sqrt")
PAC_EVALUABLE = OWN_OBJECTIVE + PAC_MODELS  # what paper=pac can evaluate (KL(Q||P) in closed form)
FULL_BATCH = OWN_OBJECTIVE + PAC_MODELS


def objective_label(cfg: DictConfig) -> str:
    """The objective a run actually optimises (FITC's is its own marginal likelihood, not the ELBO)."""
    return {"fitc": "fitc", "exact_gp": "mll"}.get(cfg.model.name, cfg.objective.name)


def check_method(cfg: DictConfig) -> None:
    model, objective, estimator = cfg.model.name, cfg.objective.name, cfg.estimator.name
    if model == "savigp":  # validated by dlm_bench/savigp/run.py:check_savigp
        return
    fixed = cfg.objective.hyperparameters is Hyperparameters.fixed
    if model not in MODELS:
        raise ConfigError(f"unknown model.name {model!r}; valid choices: {', '.join(MODELS)}")
    if objective not in OBJECTIVES:
        raise ConfigError(f"unknown objective.name {objective!r}; valid choices: {', '.join(OBJECTIVES)}")
    if estimator not in ESTIMATORS:
        raise ConfigError(f"unknown estimator.name {estimator!r}; valid choices: {', '.join(ESTIMATORS)}")
    full_batch_only = model in FULL_BATCH or objective == "sq_dlm"
    what = f"model={model}" if model in FULL_BATCH else f"objective={objective}"
    check_pac(cfg)
    if model in OWN_OBJECTIVE:
        if objective != "elbo" or cfg.objective.beta != 1.0 or fixed:
            raise ConfigError(
                f"model={model} {'is collapsed and ' if model in COLLAPSED else ''}trains its own objective; leave objective at elbo, beta=1, "
                f"hyperparameters=joint (got objective={objective}, beta={cfg.objective.beta:g}, "
                f"hyperparameters={cfg.objective.hyperparameters.value})"
            )
    if fixed and objective not in ("dlm", "sq_dlm"):
        raise ConfigError(f"objective.hyperparameters=fixed applies to objective=dlm or sq_dlm, got objective={objective}")
    if estimator != "exact" and (model in FULL_BATCH or objective not in ESTIMATORS[estimator]):
        raise ConfigError(
            f"estimator={estimator} estimates the likelihood term of model=svgp with objective="
            f"{'|'.join(ESTIMATORS[estimator])}; {what} is closed form, use estimator=exact"
        )
    n = cfg.estimator.num_samples
    if estimator in SAMPLING and (n is None or n < 1):
        raise ConfigError(f"estimator.num_samples must be an integer >= 1 for estimator={estimator}, got {n}")
    if estimator not in SAMPLING and n is not None:
        raise ConfigError(f"estimator.num_samples applies to sampling estimators ({', '.join(SAMPLING)}), "
                          f"not estimator={estimator}")
    nu = cfg.estimator.get("nu")
    if nu is not None and (estimator != "smooth_bmc" or not nu >= 0):
        raise ConfigError(f"estimator.nu must be >= 0 and applies to estimator=smooth_bmc only (got {nu}, "
                          f"estimator={estimator})")
    likelihood = cfg.model.get("likelihood")
    if likelihood not in (None, "gaussian") and (model in COLLAPSED or objective == "sq_dlm"):
        raise ConfigError(f"{what} is a Gaussian-likelihood method; use model=svgp with objective=elbo|dlm "
                          f"for model.likelihood={likelihood}")
    if estimator == "ups" and likelihood in (None, "gaussian"):
        raise ConfigError("estimator=ups is implemented for the non-Gaussian likelihoods "
                          "(probit, logistic, poisson_exp, poisson_softplus, student_t)")
    if full_batch_only and cfg.trainer.batch_size is not None:
        raise ConfigError(f"{what} is a closed-form, full-batch method; use trainer.batch_size=null")
    if full_batch_only and cfg.model.mean is not MeanFunction.zero:
        raise ConfigError(f"{what} is implemented for a zero mean function; use model.mean=zero")


def check_pac(cfg: DictConfig) -> None:
    """PAC-GP combinations (Reeb et al. 2018): pac_gp/pac_sgp <-> objective=pac_kl|pac_sqrt, and what paper=pac
    can evaluate."""
    model, objective = cfg.model.name, cfg.objective.name
    if model in PAC_MODELS and objective not in PAC_OBJECTIVES:
        raise ConfigError(f"model={model} is trained on a PAC-Bayes bound: use objective=pac_kl or pac_sqrt (got {objective})")
    if objective in PAC_OBJECTIVES:
        if model not in PAC_MODELS:
            raise ConfigError(f"objective={objective} trains model=pac_gp or pac_sgp (got model={model})")
        if cfg.objective.beta != 1.0 or cfg.objective.beta_index is not None:
            raise ConfigError(f"objective={objective} has no beta; leave objective.beta=1")
    if cfg.paper == "pac" or objective in PAC_OBJECTIVES:
        if model not in PAC_EVALUABLE:
            raise ConfigError(f"paper=pac evaluates the PAC-Bayes bound of model={'|'.join(PAC_EVALUABLE)} (got model={model})")
        if cfg.model.kernel.value != "rbf":
            raise ConfigError("paper=pac: the hyperparameter grid is defined for the SE kernel; use model.kernel=rbf")
        p = cfg.pac
        if not p.epsilon > 0:
            raise ConfigError(f"pac.epsilon must be > 0, got {p.epsilon}")
        if not 0 < p.delta <= 1:
            raise ConfigError(f"pac.delta must be in (0, 1], got {p.delta}")
        if not (p.grid_L > 0 and p.grid_G >= 1):
            raise ConfigError(f"pac.grid_L must be > 0 and pac.grid_G >= 1, got {p.grid_L}, {p.grid_G}")
        if p.round_digits is not None and not 0 <= p.round_digits <= 8:
            raise ConfigError(f"pac.round_digits must be in 0..8 or null, got {p.round_digits}")
    if cfg.pac.sparse_q.value != "fitc" and model != "pac_sgp":
        raise ConfigError(f"pac.sparse_q applies to model=pac_sgp (got model={model})")


def build_bundle(cfg: DictConfig, X_train: torch.Tensor, y_train: torch.Tensor) -> ModelBundle:
    if cfg.objective.name == "sq_dlm":
        return build_sq_dlm(cfg, X_train, y_train)
    return MODELS[cfg.model.name](cfg, X_train, y_train)


def pretrain_config(cfg: DictConfig) -> DictConfig:
    """The SVGP whose hyperparameters a fixed run adopts: same model settings, ELBO, beta=1, exact."""
    pre = copy.deepcopy(cfg)
    with read_write(pre):
        pre.model.name = "svgp"
        pre.objective.name, pre.objective.beta = "elbo", 1.0
        pre.objective.hyperparameters = Hyperparameters.joint
        pre.estimator.name, pre.estimator.num_samples = "exact", None
    return pre


def pretrain_and_freeze(cfg, bundle: ModelBundle, X, y, trainer, device, dtype) -> TrainResult:
    """Stage 1 of a fixed run. Returns the SVGP's TrainResult; the bundle is changed only if it is ok."""
    pre = build_bundle(pretrain_config(cfg), X, y).to(device=device, dtype=dtype)
    pre.train()
    result = trainer.fit(pre.loss, pre.trainable_parameters(), X, y)
    if result.status == "ok":
        bundle.adopt_hyperparameters(pre)
    return result


@torch.no_grad()
def evaluate_only(bundle: ModelBundle, X, y) -> TrainResult:
    """A bundle with nothing left to train (fixed sq-DLM): one loss evaluation, recorded as iteration 0."""
    start = time.perf_counter()
    loss = bundle.loss(X, y).item()
    wall = time.perf_counter() - start
    return TrainResult(
        converged=True, wall_s=wall, final_loss=loss, curve=[{"iteration": 0, "wall_s": wall, "loss": loss}]
    )
