"""Hydra at the edge: composition of conf/ with command-line overrides, the override grammar (quoting, plain values,
the hydra.* keys dlm-bench does not read), Hydra's and OmegaConf's error wording as one line, and what a sweep's job
asks of Hydra (its number, its overrides, the values the sweep gives a key, its beta indices). With
sweeps/hydra_app.py (the multirun, Hydra's private API) the only modules that import hydra (tests/unit/test_layers.py
counts them); everything below gets what it needs from Hydra passed in. hydra is imported inside the functions:
--help and completion stay light."""

from __future__ import annotations

import os
import re

from ..errors import ConfigError, UserError

# Hydra's own settings `dlm-bench run` is asked for: where its values live here instead (run composes with Hydra's
# compose API, which has no output or working directory of its own)
HYDRA_KEYS = {
    "hydra.run.dir": "run_dir={value} (this run's folder) or results_dir= (the root of every run: "
                     "<results_dir>/<experiment>/<run name>)",
    "hydra.sweep.dir": "dlm-bench sweep (it keeps Hydra's sweep files under <results_dir>/<experiment>/_hydra/)",
    "hydra.job.chdir": "nothing: runs never change the working directory",
}


_REGISTERED: dict = {}  # the key of what register_configs last stored


def register_configs() -> None:
    """The structured configs Hydra composes against: the schema (config/schema.py) and one `dataset` option per
    registered dataset (dlm_bench/data/catalog.py), plus the user's own table (csv)."""
    from hydra.core.config_store import ConfigStore

    from ..config.papers import ENV, papers
    from ..config.schema import Config, DatasetConfig, dataset_options, register_paper_options

    # Hydra copies its config repository at every composition (CachingConfigRepository: copy.deepcopy of the
    # repository "to avoid mutating it with initialize_sources()"), and with it this process-wide store of ~60
    # structured nodes: a fifth of a composition's CPU. Nothing writes to the store while composing (ConfigStore.load
    # hands out deep copies of its nodes), so the repository's copy shares it.
    ConfigStore.__deepcopy__ = lambda self, memo: self
    # Storing ~50 structured nodes costs 0.25 s of CPU, a third of one composition; ConfigStore is a process-wide
    # singleton that GlobalHydra.clear() leaves alone, so the same registration is done once per process.
    key = (tuple(dataset_options()), os.environ.get(ENV), tuple(papers()))
    if _REGISTERED.get("key") == key:
        return
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=Config)
    register_paper_options(cs)
    for name in dataset_options():
        node = DatasetConfig(name=name, task="regression") if name == "csv" else DatasetConfig(name=name)
        cs.store(group="dataset", name=name, node=node)
    _REGISTERED["key"] = key


def compose_errors() -> tuple:
    """The exceptions Hydra and OmegaConf raise for a config that does not compose or resolve."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    return HydraException, OmegaConfBaseException


# --- the override grammar ----------------------------------------------------------------------------------------


def check_hydra_overrides(overrides: list[str], command: str = "run") -> None:
    """hydra.* overrides that `dlm-bench run` would silently ignore (hydra.run.dir=/x used to write to results/):
    refused with the key that does the job."""
    for ov in overrides:
        key, _, value = ov.partition("=")
        key = key.lstrip("+~")
        if key != "hydra" and not key.startswith("hydra."):
            continue
        if command == "sweep" and key != "hydra.run.dir":
            continue  # the sweep is a Hydra multirun: hydra.sweep.*, hydra.launcher.* are read
        hint = HYDRA_KEYS.get(key, "the dlm-bench keys (dlm-bench run --help)").format(value=value or "DIR")
        raise UserError(f"{key} is not read by dlm-bench {command}; use {hint}")


def quote_overrides(overrides: list[str]) -> list[str]:
    """`key=value` overrides whose value Hydra's override grammar cannot read unquoted (non-ASCII letters:
    results_dir=/tmp/ergebnisse-ä raised LexerNoViableAltException), quoted as Hydra's grammar wants:
    key='value'. Anything that parses is left as it is (comma lists, range(), quoted values)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    out = []
    for ov in overrides:
        key, sep, value = ov.partition("=")
        if sep and re.fullmatch(r"[+~]?[A-Za-z_][\w.]*", key) and value and value[0] not in "'\"":
            try:
                parser.parse_override(ov)
            except Exception:
                quoted = f"{key}='" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
                try:
                    parser.parse_override(quoted)
                    ov = quoted
                except Exception:
                    pass  # Hydra's own message says what is wrong
        out.append(ov)
    return out


def plain_value(override: str) -> str:
    """The value of `key=value` as Hydra reads it: quotes of either kind removed ('results_dir="DIR"' is DIR, as
    `run` has it), escapes undone. A value Hydra cannot read as a plain string comes back as written."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    text = override.partition("=")[2]
    try:
        value = OverridesParser.create().parse_override(override).value()
    except Exception:
        return text
    return value if isinstance(value, str) else text


def override_values(override: str) -> list:
    """The values `key=value` gives its key as Hydra reads it: every value of a sweep (a,b / range() / choice()),
    else the one value."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    o = OverridesParser.create().parse_override(override)
    return list(o.sweep_iterator()) if o.is_sweep_override() else [o.value()]


# --- composition ---------------------------------------------------------------------------------------------------


def compose_config(overrides: list[str], hydra_config: bool = False):
    """Compose conf/config.yaml with Hydra overrides; any composition problem becomes a UserError.
    hydra_config: also return Hydra's own node (`run --cfg hydra|all`), after the same checks."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import MissingConfigException

    from ..config.schema import conf_dir

    check_hydra_overrides(overrides)
    overrides = quote_overrides(overrides)
    check_groups(overrides)
    register_configs()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=overrides)
    except MissingConfigException as err:
        raise UserError(one_line(err)) from err
    except compose_errors() as err:
        raise UserError(_sweep_hint(err) or unknown_key_message(err) or one_line(err)) from err
    resolve_interpolations(cfg)
    from ..registry.validation import validate

    try:
        validate(cfg, overrides)
    except ConfigError as err:
        raise UserError(str(err)) from err
    if hydra_config:
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            return compose(config_name="config", overrides=overrides, return_hydra_config=True)
    return cfg


def check_groups(overrides: list[str]) -> None:
    """Group choices and +/~ keys checked before Hydra sees them: one line with the valid choices."""
    from ..config.schema import GROUPS, group_options

    for ov in overrides:
        key, sep, value = ov.partition("=")
        if key.lstrip("+~") == "experiment" and sep:
            check_experiment(value)
        if key.startswith(("+", "~")) and key.lstrip("+~") not in GROUPS + ("experiment",):
            raise UserError(f"cannot add or delete config key {key.lstrip('+~')!r}: the schema is fixed (dlm-bench experiments lists the groups)")
        key = key.lstrip("+~")
        if sep and key in GROUPS and value and "," not in value and value not in group_options(key):
            raise UserError(f"unknown {key} {value!r}; valid choices: {', '.join(group_options(key))}")


def check_experiment(value: str) -> None:
    from ..config.schema import group_options

    if value not in group_options("experiment"):
        raise UserError(f"unknown experiment {value!r}; valid choices: {', '.join(group_options('experiment'))}")


def resolve_interpolations(cfg) -> None:
    """Resolve every ${...} once, so a missing key or environment variable (trainer.lr=${nope},
    ${oc.env:NOPE}) is one UserError line naming the key, not an internal error later."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as err:
        key = getattr(err, "full_key", None)
        text = str(err).splitlines()[0].strip() if str(err).strip() else type(err).__name__
        raise UserError(f"cannot resolve {key}: {text}" if key else one_line(err)) from None


# --- Hydra's error wording, one line -------------------------------------------------------------------------------


def _sweep_hint(err: BaseException) -> str | None:
    """Hydra's 'Ambiguous value ... add --multirun' for a comma list in `run`: one line naming our commands."""
    m = re.search(r"Ambiguous value for argument '([^']+)'", one_line(err))
    if not m:
        return None
    ov = m.group(1)
    return (f"{ov} is a sweep (a comma list): run it with dlm-bench sweep {ov} (or dlm-bench run -m {ov}); "
            f"for a list value write {ov.partition('=')[0]}=[{ov.partition('=')[2]}]")


def unknown_key_message(err: BaseException) -> str | None:
    """'unknown config key X; valid keys: ...' for a key the schema does not have."""
    import dataclasses

    from ..config import schema

    m = re.search(r"Key '([^']+)' not in '(\w+)'", one_line(err))
    node = getattr(schema, m.group(2), None) if m else None
    if node is None or not dataclasses.is_dataclass(node):
        return None
    full = re.search(r"Could not override '([^']+)'", one_line(err))
    key = full.group(1) if full else m.group(1)
    return f"unknown config key {key!r}; valid keys here: {', '.join(f.name for f in dataclasses.fields(node))}"


def composition_message(err: BaseException) -> str:
    """A sweep's composition error (plan or launch) as the one line `dlm-bench sweep` prints."""
    return unknown_key_message(err) or one_line(err)


CONTEXT_LINES = ("full_key:", "object_type=", "reference_type=")  # OmegaConf's context lines after a message


def _own_text(err: BaseException) -> str:
    """An error's own message on one line, OmegaConf's context lines left out."""
    return " ".join(ln.strip() for ln in str(err).splitlines() if ln.strip()
                    and not ln.strip().startswith(CONTEXT_LINES))


def one_line(err: BaseException) -> str:
    """The informative part of Hydra/OmegaConf's (multi-line) messages and their causes, on one line."""
    parts = []
    e: BaseException | None = err
    while e is not None:
        text = _own_text(e)
        if text and not any(text in p for p in parts):
            parts.append(text)
        e = e.__cause__
    return "; ".join(parts) or type(err).__name__


def point_message(err: BaseException) -> str:
    """Why a sweep's grid point is invalid (sweeps/plan.py): the error's own message on one line, its cause left out."""
    return _own_text(err) or type(err).__name__


# --- what a sweep's job asks of Hydra (None / [] outside a Hydra job) -------------------------------------------


def _job_config():
    try:
        from hydra.core.hydra_config import HydraConfig

        return HydraConfig.get()
    except Exception:  # HydraConfig was not set: not inside a Hydra job
        return None


def job_number() -> int | None:
    """The number of the Hydra job this process runs (a sweep's grid point; Hydra's launch line names its
    overrides under it), or None outside one."""
    hc = _job_config()
    return None if hc is None else hc.job.num


def job_overrides() -> list[str]:
    """The overrides of the Hydra job this process runs (a sweep's grid point), or none outside a job."""
    hc = _job_config()
    return [] if hc is None else list(hc.overrides.task)


def swept_values(key: str, command_line: str | None = None) -> list | None:
    """The values the sweep this job belongs to gives `key`: the command line's value for it (`command_line`, as
    written: `0,1,2`, `range(3)`; the parent passes it to its jobs) else the experiment's hydra.sweeper.params; a
    key swept by neither: None, as outside a Hydra job."""
    hc = _job_config()
    if hc is None:
        return None
    value = command_line or (hc.sweeper.get("params") or {}).get(key)
    return None if value is None else override_values(f"{key}={value}")


# The sweep's beta indices, passed to the run harness (run.execute's `beta_indices`: the members a batched beta group,
# run/batched.py, trains, not the full grid). A command-line `objective.beta_index=<sweep>` reaches the jobs (also
# joblib / SLURM workers) in INDICES_ENV (launch.run_sweep); else the experiment's hydra.sweeper.params give them.
INDICES_ENV = "DLM_BENCH_SWEEP_BETA_INDICES"


def command_line_beta_indices(overrides: list[str]) -> str | None:
    """INDICES_ENV's value for the jobs: the command line's `objective.beta_index=<sweep>` (None: not on it)."""
    values = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0].lstrip("+~") == "objective.beta_index"
              and "=" in o]
    return values[-1] if values else None


def sweep_beta_indices() -> list[int] | None:
    """The beta indices of the sweep this job belongs to: the command line's objective.beta_index sweep, else
    the experiment's hydra.sweeper.params; None outside a Hydra job (then the group is the full grid)."""
    values = swept_values("objective.beta_index", os.environ.get(INDICES_ENV))
    return None if values is None else [int(v) for v in values]
