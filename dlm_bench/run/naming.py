"""Run names and run directories: deterministic, readable key fields + a hash of everything that can change the
result. Frozen behaviour: resume finds runs by these names, so a new config key enters ADDED_LATER at its old
implicit value and a removed one REMOVED_LATER at its last value."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from .. import data
from ..config.schema import GPYTORCH_NOISE_FLOOR, Hyperparameters
from ..registry.models import MODELS, name_label, pac_evaluation, unused_sections


def config_dict(cfg: DictConfig) -> dict:
    return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)


# Settings that say where or how to run, not what: they do not change a run's name.
NOT_IN_RUN_NAME = ("results_dir", "run_dir", "launcher", "resume", "report")
# trainer settings of the same kind (how a run is watched and kept, not what it computes)
TRAINER_NOT_IN_RUN_NAME = ("progress", "checkpoint_every_s")
# (group, key) -> values that mean "as before the key existed": omitted from the run-name hash
ADDED_LATER = {
    ("model", "likelihood"): (None, "gaussian"),
    ("model", "num_inducing_rule"): (None,),
    ("estimator", "nu"): (None,),
    ("objective", "beta_grid"): (True,),
    ("trainer", "track_every"): (None,),
    ("trainer", "tol_on"): ("mean",),
    ("trainer", "stochastic_lr"): (None,),
    # fixed runs: the stage-1 model (resolved from auto below); joint runs drop both keys
    ("objective", "pretrain_model"): ("svgp",),
    ("objective", "pretrain_epochs"): (None,),
    ("objective", "pretrain_beta"): ("one",),
    ("sggpm", "learn_hyperparameters"): (False,),
    ("sggpm", "dual_upper_bound"): (True,),
    ("dataset", "categorical"): (None,),
    ("model", "noise_floor"): (GPYTORCH_NOISE_FLOOR,),
    ("protocol", "stride"): (None,),
    ("lgm", "lengthscale"): (None,),
    ("lgm", "outputscale"): (None,),
}
# of those, the ones added after checkpoint_identity began hashing the whole config: left out of its hash at their
# implicit value too, so a killed run's checkpoint still resumes (keys added before stay hashed as they were)
CHECKPOINT_ADDED_LATER = (("model", "num_inducing_rule"),)
# keys removed from the config after results were written: hashed at their last value, so names stay valid
REMOVED_LATER = {
    ("protocol", "folds"): 5,  # the preliminary `sggpm` protocol (superseded by dlm_bench/sggpm/protocol.py)
    ("protocol", "fold"): None,
    ("protocol", "active_size"): None,
    # the Gauss-Hermite node counts: the adaptive rule of likelihoods/quadrature/ replaced them (2026-11-24)
    ("lgm", "quadrature_nodes"): 20,
    ("sggpm", "quadrature_nodes"): 20,
}


def drop_added_later(d: dict, keys=tuple(ADDED_LATER)) -> dict:
    """Remove from a config dict (in place) every ADDED_LATER key (of `keys`) that holds its old implicit value: a
    config written before the key existed and one written after compare equal (run names, settings keys,
    checkpoints)."""
    for group, key in keys:
        implicit = ADDED_LATER[(group, key)]
        section = d.get(group)
        if isinstance(section, dict) and section.get(key, implicit[0]) in implicit:
            section.pop(key, None)
    return d


def drop_not_in_name(d: dict) -> dict:
    """Remove from a config dict (in place) the settings that say where or how to run (NOT_IN_RUN_NAME,
    TRAINER_NOT_IN_RUN_NAME): run names, checkpoint identities and the sweep estimate's settings key leave them out."""
    for k in NOT_IN_RUN_NAME:
        d.pop(k, None)
    for key in TRAINER_NOT_IN_RUN_NAME:
        d.get("trainer", {}).pop(key, None)
    return d


def run_name(cfg: DictConfig, resolve: bool = True) -> str:
    """Deterministic: readable key fields + a hash of everything that can change the result. Works on a copy
    (task defaults resolved there), so the caller's config is unchanged; an unknown dataset or likelihood raises
    (resolve=False names a configuration that cannot be resolved, for its failure record)."""
    cfg = copy.deepcopy(cfg)
    spec = MODELS.get(cfg.model.name)
    if resolve and spec is not None and spec.task_defaults is not None:  # own-loop models: their own defaults
        spec.task_defaults(cfg)
    if spec is not None and spec.name_defaults is not None:  # a fixed run's stage-1 model (auto -> svgp / sgpr)
        spec.name_defaults(cfg)
    d = config_dict(cfg)
    if cfg.objective.hyperparameters is not Hyperparameters.fixed:  # no stage 1: its settings change nothing
        for key in ("pretrain_model", "pretrain_epochs", "pretrain_beta"):
            d["objective"].pop(key, None)
    # keys added after the first results were written are left out at their old implicit values, so
    # existing run names (and sweep resumption) stay valid
    drop_added_later(d)
    for (group, key), last in REMOVED_LATER.items():
        if group in d:
            d[group][key] = last
    drop_not_in_name(d)
    d.get("objective", {}).pop("beta_batch", None)  # how, not what: batched and unbatched runs share names
    d.pop("eval", None)  # what is evaluated shows in whether the pac settings are hashed
    if not pac_evaluation(cfg):
        d.pop("pac", None)  # PAC settings change nothing else: keep other papers' run names as they were
    for section in unused_sections(cfg):
        d.pop(section, None)  # likewise a model's own settings (lgm.*) for every other model
    if d["objective"].get("beta_index") is not None:
        d["objective"].pop("beta", None)  # beta is derived from the index
    if d.get("dataset", {}).get("name") == "csv":  # the user's file: an edited file is a new run
        d["dataset"]["sha256"] = data.user_file_sha256(d["dataset"].get("path"))
    elif d.get("dataset", {}).get("path") is not None:  # a named dataset's file given by hand (docs/datasets.md):
        d["dataset"]["path"] = None  # checked against the catalogue (hash where pinned, registry shape): same data
    digest = hashlib.sha1(json.dumps(d, sort_keys=True).encode()).hexdigest()[:8]
    k = cfg.objective.beta_index
    beta = f"beta{cfg.objective.beta:g}" if k is None else f"betaidx{k}"
    name = f"{cfg.dataset.name}_{cfg.model.name}_{name_label(cfg)}_{beta}_seed{cfg.seed}_{digest}"
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", name)


def checkpoint_identity(cfg: DictConfig) -> dict:
    """What a checkpoint records of its run (training/checkpoint.py): the run name and a hash of the whole
    configuration less where and how it runs, so a checkpoint put in another run's place (another seed's, another
    M's) is not resumed there."""
    # keys added after checkpoints were written, at their implicit value
    d = drop_added_later(drop_not_in_name(config_dict(cfg)), CHECKPOINT_ADDED_LATER)
    config = hashlib.sha1(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:12]
    try:
        name = run_name(cfg)
    except Exception:  # noqa: BLE001 - a name that cannot be resolved: the hash alone identifies it
        name = None
    return {"run": name, "config": config}


def run_dir_for(cfg: DictConfig, resolve: bool = True) -> Path:
    if cfg.run_dir:
        return Path(cfg.run_dir)
    return Path(cfg.results_dir) / cfg.experiment / run_name(cfg, resolve)
