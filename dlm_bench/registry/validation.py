"""The validation pipeline: every check a configuration passes before any data is loaded or any training starts,
in one place (`validate_run`). Each failure is a `ConfigError` with one line that names the key, the bad value and
what is allowed; the CLI prints it and exits 2. The steps: numeric domains, group choices a preset replaced, the
model/objective/estimator combination rules and the PAC-Bayes settings (combination_rules.py), settings
the chosen model does not read (check_unused_settings: refused, never silently ignored), then the model family's own
declared check (ModelSpec.check_config: lgm.*, savigp.*, sggpm.*, the Trainer models').
Checks that need the data (a likelihood against the dataset's task) are the family's `check_data`, which the run
harness calls right after loading.
"""

from __future__ import annotations

import functools
import math
import os
import re
import tempfile
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from ..config.schema import Config, check_domains, conf_dir
from ..errors import ConfigError


def validate_numbers(cfg: DictConfig) -> None:
    """Every numeric and choice setting of the common sections within its domain, the seed and the results_dir."""
    check_domains(cfg, ("trainer",))
    check_seed(cfg.seed)
    check_results_dir(cfg.results_dir)
    check_domains(cfg, ("model", "objective", "protocol", "launcher"))
    o = cfg.objective
    if o.pretrain_beta == "same" and getattr(o.hyperparameters, "value", o.hyperparameters) == "fixed":
        from ..models.fixed import resolve_pretrain_model

        if resolve_pretrain_model(cfg) != "svgp":  # before anything trains, not at stage 1 of the first run
            raise ConfigError("objective.pretrain_beta=same needs objective.pretrain_model=svgp (the collapsed "
                              f"SGPR has no beta; got {o.pretrain_model} -> {resolve_pretrain_model(cfg)})")


SEED_LIMIT = 2**63  # numpy's and torch's seeding take a 64-bit seed (torch.manual_seed: a signed/unsigned long long)


def check_seed(seed) -> None:
    if seed is None or not 0 <= seed < SEED_LIMIT:
        raise ConfigError(f"seed must be an integer >= 0 and < 2**63 (numpy and torch seeding take 64 bits), got {seed}")


def check_results_dir(value) -> None:
    """An empty results_dir would write runs into the current directory."""
    if value is None or not str(value).strip():
        raise ConfigError(f"results_dir must name a folder, got {value!r} (empty: runs would land in the current "
                          "directory); e.g. results_dir=results")


def existing_ancestor(directory: Path) -> Path:
    """`directory` or its nearest ancestor that exists (what a later mkdir(parents=True) would create below)."""
    directory = Path(os.path.abspath(directory))
    while not directory.exists() and directory.parent != directory:
        directory = directory.parent
    return directory


def check_writable(directory: Path) -> None:
    """Write a probe file in `directory`, or in its nearest existing ancestor when it does not exist yet, so an
    unwritable results_dir fails before training (a run whose results cannot be written is lost work). Nothing is
    created: a run refused later (its data, its M) leaves no empty `<results_dir>/<experiment>/` behind."""
    try:
        where = existing_ancestor(directory)
        if not where.is_dir():
            raise NotADirectoryError(20, "Not a directory")
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=where)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise ConfigError(f"cannot write results to {directory}: {reason}; set results_dir= (or run_dir=) to a writable directory") from None


def _option_file(group: str, option: str):
    """conf/<group>/<option>.yaml as OmegaConf reads it, or None when the group has no such file."""
    path = conf_dir() / group / f"{option}.yaml"
    return OmegaConf.load(path) if path.is_file() else None


def _option_name(group: str, option: str) -> str:
    """The `name` a group option's file sets (which may differ from the option's own name), else the option."""
    node = _option_file(group, option)
    name = node.get("name") if node is not None and "name" in node else None
    return name if isinstance(name, str) else option


CHOICE_GROUPS = ("dataset", "model", "objective", "estimator")


def check_choices(cfg: DictConfig, overrides: list[str]) -> None:
    """A group chosen on the command line (dataset=twonorm) that a later preset (dlm_data=ringnorm, an
    experiment) silently replaced is an error, not a run of something else."""
    for ov in overrides:
        key, sep, value = ov.partition("=")
        key = key.lstrip("+~")
        if not sep or key not in CHOICE_GROUPS or not value or "," in value or "(" in value:
            continue
        wanted, got = _option_name(key, value), cfg[key].name
        if wanted != got:
            setters = [o.partition("=")[0].lstrip("+") + "=" + o.partition("=")[2] for o in overrides
                       if o.partition("=")[0].lstrip("+") in ("dlm_data", "method", "experiment")]
            by = " or ".join(setters) or "a preset"
            raise ConfigError(f"{key}={value} conflicts with {by}, which sets {key}.name={got}; choose one of them")
    check_preset_groups(overrides)


def _preset_group_choices(preset: str, option: str) -> dict[str, str]:
    """group -> option for the `override /group: option` entries of conf/<preset>/<option>.yaml's defaults list."""
    node = _option_file(preset, option)
    out = {}
    for entry in (node.get("defaults") if node is not None else None) or []:
        if isinstance(entry, str) or not hasattr(entry, "items"):
            continue
        for k, v in entry.items():
            k = str(k)
            if k.startswith("override /"):
                out[k[len("override /"):]] = str(v)
    return out


def _default_choices() -> dict[str, str]:
    """group -> option of conf/config.yaml's defaults list."""
    text = (conf_dir() / "config.yaml").read_text()
    return dict(re.findall(r"^\s*-\s*(?:optional\s+)?(\w+):\s*(\S+)", text, re.M))


def check_preset_groups(overrides: list[str]) -> None:
    """A command-line group choice (objective=dlm) wins over the `override /objective: elbo` of a method preset
    given beside it (method=elbo), so the run would silently train something else than the method named: refused."""
    given = {}
    for ov in overrides:
        key, sep, value = ov.partition("=")
        if sep and value and "," not in value and "(" not in value:
            given[key.lstrip("+~")] = value
    if "method" not in given:
        return
    defaults = _default_choices()
    for group, option in _preset_group_choices("method", given["method"]).items():
        # the model and objective are what a method names; another group conflicts only where the method sets
        # a non-default option (method=dlm_bmc10 estimator=exact), not where it restates the default
        # (method=dlm estimator=bmc: the DLM method with a sampled estimator)
        names_it = group in ("model", "objective") or option != defaults.get(group)
        if group in given and given[group] != option and names_it:
            raise ConfigError(f"{group}={given[group]} conflicts with method={given['method']}, which sets "
                              f"{group}={option}; choose one of them")


@functools.lru_cache(maxsize=None)
def _schema_defaults(section: str) -> dict:  # read-only: callers compare, never mutate
    return OmegaConf.to_container(OmegaConf.structured(Config)[section], enum_to_str=True)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def unread_settings(cfg: DictConfig) -> list[str]:
    """`section.key=value` for every setting of a section the run does not read that differs from the schema
    default: the model-owned sections (ModelSpec.config_section: lgm, savigp, sggpm) of the other models, and pac.*
    unless the run has the PAC-Bayes evaluation (objectives.pac_evaluation)."""
    from ..objectives import pac_evaluation
    from .models import unused_sections

    sections = sorted(unused_sections(cfg))
    if not pac_evaluation(cfg):
        sections.append("pac")
    out = []
    for section in sections:
        if section not in cfg:
            continue
        given = OmegaConf.to_container(cfg[section], resolve=True, enum_to_str=True)
        default = _schema_defaults(section)
        for key, value in given.items():
            if not _same(value, default.get(key)):
                out.append(f"{section}.{key}={value}")
    return out


def check_unused_settings(cfg: DictConfig) -> None:
    """Settings the chosen model does not read are refused with their names (rule chosen for issue 27, documented
    in docs/robustness.md): a run would otherwise record a config it did not use."""
    unread = unread_settings(cfg)
    if not unread:
        return
    from .models import MODELS

    owners = []
    for setting in unread:
        section = setting.partition(".")[0]
        readers = ("objective=pac_kl|pac_sqrt or eval.pac=true" if section == "pac" else
                   "model=" + "|".join(n for n, s in MODELS.items() if s.config_section == section))
        if (section, readers) not in owners:
            owners.append((section, readers))
    where = "; ".join(f"{section}.* is read only with {readers}" for section, readers in owners)
    raise ConfigError(f"model={cfg.model.name} does not read {', '.join(unread)} ({where}); remove "
                      f"{'it' if len(unread) == 1 else 'them'} or choose the model that reads {'it' if len(unread) == 1 else 'them'}")


USER_TABLE_KEYS = ("target", "task", "categorical")  # DatasetConfig keys only dataset=csv reads


def check_dataset_keys(cfg: DictConfig) -> None:
    """dataset.target/task/categorical without dataset=csv would train the registered default (boston) instead of
    the user's file. dataset.path is read for a registered dataset too: the user's copy of its files (docs/datasets.md,
    data/api.py local_sources), except for a shipped one, where it would be ignored."""
    if cfg.dataset.name == "csv":
        return
    given = [f"dataset.{k}" for k in ("path", *USER_TABLE_KEYS) if cfg.dataset.get(k) is not None]
    if set(given) - {"dataset.path"}:  # a table's keys: the user's own file, with dataset=csv forgotten
        raise ConfigError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} read only with dataset=csv, but "
                          f"the dataset is {cfg.dataset.name!r} (a registered dataset); add dataset=csv to train on "
                          "your file, or remove them")
    if cfg.dataset.get("path") is not None:
        from ..data import DATASETS

        spec = DATASETS.get(cfg.dataset.name)
        if spec is not None and spec.shipped:
            raise ConfigError(f"dataset.path names your copy of a downloaded dataset's files, but {cfg.dataset.name!r} "
                              "is shipped with the package; add dataset=csv to train on your own file, or remove it")


def check_protocol_task(cfg: DictConfig, overrides: list[str]) -> None:
    """A regression split chosen on the command line (protocol=dlm_regression, protocol.name=dlm_regression) for a
    binary, count or multiclass dataset: refused (it trained twonorm to chance level). Left out, the protocol
    follows the task (models/task_defaults.py resolve_protocol). fp and sggpm runs split by their own protocols."""
    from ..models.task_defaults import DEFAULT_PROTOCOL, TASK_PROTOCOL, dataset_task
    from .models import MODELS

    spec = MODELS.get(cfg.model.name)
    if spec is not None and spec.own_loop and cfg.model.name != "savigp":
        return
    for ov in overrides:
        key, sep, value = ov.partition("=")
        key = key.lstrip("+~")
        if not sep or "," in value or "(" in value:
            continue
        if key == "protocol" and _option_name("protocol", value) == DEFAULT_PROTOCOL or \
                key == "protocol.name" and value == DEFAULT_PROTOCOL:
            try:
                task = dataset_task(cfg)
            except Exception:  # an unknown dataset is reported by the load
                return
            if task in TASK_PROTOCOL:
                raise ConfigError(f"{key}={value} is the regression split, but dataset {cfg.dataset.name!r} is a "
                                  f"{task} task; use protocol={TASK_PROTOCOL[task]} (the default for {task} data: "
                                  "leave protocol out)")


def check_ascii_numbers(cfg: DictConfig, overrides: list[str]) -> None:
    """A number written with other digits than 0-9 (`seed=٣`, Arabic-Indic three): Python's int() and float() read
    it, so it ran as seed 3 under a name the user never typed; refused, naming the ASCII spelling."""
    for ov in overrides:
        key, sep, value = ov.partition("=")
        odd = [c for c in value if c.isdigit() and not c.isascii()]
        if not sep or not odd:
            continue
        number = OmegaConf.select(cfg, key.lstrip("+~"), default=None)
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            shown = value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value
            raise ConfigError(f"{key}={shown!r} writes a number with digits other than 0-9 ({''.join(odd)!r}); "
                              f"write it as {key}={number}")


def validate(cfg: DictConfig, overrides: list[str] | None = None) -> None:
    if overrides:
        check_ascii_numbers(cfg, overrides)
    validate_numbers(cfg)
    check_dataset_keys(cfg)
    if overrides:
        check_choices(cfg, overrides)
        check_protocol_task(cfg, overrides)


def check_environment() -> None:
    """The DLM_BENCH_* settings a run reads while training (the progress heartbeat, a fixed run's wait for another
    process's stage 1): a bad value is one line before anything trains, not a failed run.json."""
    from ..training.stage1_store import env_seconds
    from ..util.logline import Heartbeat

    try:
        Heartbeat.from_env()
        env_seconds("DLM_BENCH_PRETRAIN_WAIT_S", 1.0)
        env_seconds("DLM_BENCH_PRETRAIN_PROGRESS_S", 1.0)
    except ValueError as err:
        raise ConfigError(str(err)) from None


def validate_run(cfg: DictConfig, overrides: list[str] | None = None):
    """The whole pipeline for one run configuration; returns its ModelSpec."""
    from .combination_rules import check_combination
    from .models import model_spec, pac_evaluation

    validate(cfg, overrides)
    check_environment()
    spec = model_spec(cfg)
    check_combination(cfg)
    if pac_evaluation(cfg):  # epsilon, delta, grid_L, grid_G, round_digits: ranges declared with PacConfig
        check_domains(cfg, ("pac",))
    check_unused_settings(cfg)
    if spec.config_section is not None:  # its own section's ranges and choices (field metadata), for every paper
        check_domains(cfg, (spec.config_section,))
    if spec.check_config is not None:
        spec.check_config(cfg)
    return spec
