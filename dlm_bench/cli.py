# PYTHON_ARGCOMPLETE_OK
"""`dlm-bench`: thin command-line entry point. Subcommands: run, sweep, report, experiments, datasets, fetch.
Shell completion (commands, options, config groups and their options, config keys) through argcomplete:
`eval "$(register-python-argcomplete dlm-bench)"` in bash or zsh (README.md)."""

from __future__ import annotations

import argparse
import os
import sys
import time

USAGE_EXIT = 2


class UserError(Exception):
    """Printed as one line, exit 2."""


# Hydra's own settings `dlm-bench run` is asked for: where its values live here instead (run composes with Hydra's
# compose API, which has no output or working directory of its own)
HYDRA_KEYS = {
    "hydra.run.dir": "run_dir={value} (this run's folder) or results_dir= (the root of every run: "
                     "<results_dir>/<experiment>/<run name>)",
    "hydra.sweep.dir": "dlm-bench sweep (it keeps Hydra's sweep files under <results_dir>/<experiment>/_hydra/)",
    "hydra.job.chdir": "nothing: runs never change the working directory",
}


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
    import re

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


def _sweep_hint(err: BaseException) -> str | None:
    """Hydra's 'Ambiguous value ... add --multirun' for a comma list in `run`: one line naming our commands."""
    import re

    m = re.search(r"Ambiguous value for argument '([^']+)'", _one_line(err))
    if not m:
        return None
    ov = m.group(1)
    return (f"{ov} is a sweep (a comma list): run it with dlm-bench sweep {ov} (or dlm-bench run -m {ov}); "
            f"for a list value write {ov.partition('=')[0]}=[{ov.partition('=')[2]}]")


def compose_config(overrides: list[str], hydra_config: bool = False):
    """Compose conf/config.yaml with Hydra overrides; any composition problem becomes a UserError.
    hydra_config: also return Hydra's own node (`run --cfg hydra|all`), after the same checks."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException, MissingConfigException
    from omegaconf.errors import OmegaConfBaseException

    from .config.schema import GROUPS, conf_dir, group_options, register_configs

    check_hydra_overrides(overrides)
    overrides = quote_overrides(overrides)
    for ov in overrides:
        key, sep, value = ov.partition("=")
        if key.lstrip("+~") == "experiment" and sep and value not in group_options("experiment"):
            raise UserError(f"unknown experiment {value!r}; valid choices: {', '.join(group_options('experiment'))}")
        if key.startswith(("+", "~")) and key.lstrip("+~") not in GROUPS + ("experiment",):
            raise UserError(f"cannot add or delete config key {key.lstrip('+~')!r}: the schema is fixed (dlm-bench experiments lists the groups)")
        key = key.lstrip("+~")
        if sep and key in GROUPS and value and "," not in value and value not in group_options(key):
            raise UserError(f"unknown {key} {value!r}; valid choices: {', '.join(group_options(key))}")
    register_configs()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=overrides)
    except MissingConfigException as err:
        raise UserError(_one_line(err)) from err
    except (HydraException, OmegaConfBaseException) as err:
        raise UserError(_sweep_hint(err) or _unknown_key_message(err) or _one_line(err)) from err
    resolve_interpolations(cfg)
    from .errors import ConfigError
    from .registry.validation import validate

    try:
        validate(cfg, overrides)
    except ConfigError as err:
        raise UserError(str(err)) from err
    if hydra_config:
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            return compose(config_name="config", overrides=overrides, return_hydra_config=True)
    return cfg


def resolve_interpolations(cfg) -> None:
    """Resolve every ${...} once, so a missing key or environment variable (trainer.lr=${nope},
    ${oc.env:NOPE}) is one UserError line naming the key, not an internal error later."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as err:
        raise UserError(interpolation_message(err)) from None


def interpolation_message(err: BaseException) -> str:
    key = getattr(err, "full_key", None)
    text = str(err).splitlines()[0].strip() if str(err).strip() else type(err).__name__
    if key:
        return f"cannot resolve {key}: {text}"
    return _one_line(err)


def _unknown_key_message(err: BaseException) -> str | None:
    """'unknown config key X; valid keys: ...' for a key the schema does not have."""
    import dataclasses
    import re

    from .config import schema

    m = re.search(r"Key '([^']+)' not in '(\w+)'", _one_line(err))
    node = getattr(schema, m.group(2), None) if m else None
    if node is None or not dataclasses.is_dataclass(node):
        return None
    full = re.search(r"Could not override '([^']+)'", _one_line(err))
    key = full.group(1) if full else m.group(1)
    return f"unknown config key {key!r}; valid keys here: {', '.join(f.name for f in dataclasses.fields(node))}"


def _one_line(err: BaseException) -> str:
    """The informative part of Hydra/OmegaConf's (multi-line) messages, on one line."""
    parts = []
    e: BaseException | None = err
    while e is not None:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        # OmegaConf appends full_key/object_type context lines; keep the message proper
        lines = [ln for ln in lines if not ln.startswith(("full_key:", "object_type=", "reference_type="))]
        if lines:
            text = " ".join(lines)
            if not any(text in p for p in parts):
                parts.append(text)
        e = e.__cause__
    return "; ".join(parts) or type(err).__name__


def cmd_run(args) -> int:
    from .config.beta_grid import OutsideBetaGrid
    from .data import DatasetError
    from .errors import ConfigError, ResultsNotWritten
    from .run import execute

    overrides = list(args.overrides)
    if args.cfg is not None and args.cfg not in CFG_CHOICES:  # `--cfg key=value`: the value is an override
        overrides.insert(0, args.cfg)
        args.cfg = "job"
    if args.multirun:  # Hydra's habit: `run -m seed=0,1` is the sweep
        if args.cfg is not None:
            raise UserError("--cfg prints one run's config; for a grid use dlm-bench sweep --dry-run")
        print("dlm-bench: run -m runs dlm-bench sweep (finished points are skipped; dlm-bench sweep --help)",
              file=sys.stderr, flush=True)
        return cmd_sweep(argparse.Namespace(overrides=overrides, force=False, retry_failed=False, dry_run=False,
                                            estimate=False, time_limit=None))
    cfg = compose_config(overrides, hydra_config=args.cfg in ("hydra", "all"))  # the command line's own errors first
    from .sweeps.single_point import experiment_point

    extra = experiment_point(quote_overrides(overrides))
    if extra:
        overrides += extra
        cfg = compose_config(overrides, hydra_config=args.cfg in ("hydra", "all"))
    if args.cfg is not None:
        if extra:
            announce_experiment_point(overrides, extra)
        return print_config(cfg, args.cfg)
    try:
        record, run_dir = execute(cfg)
    except (ConfigError, DatasetError, OutsideBetaGrid) as err:
        raise UserError(str(err)) from err
    except ResultsNotWritten as err:  # trained; its files were rescued elsewhere (the message says where)
        print(f"dlm-bench: error: {err}", file=sys.stderr)
        return 1
    if extra:  # said once the run is made: a bad input stays a one-line error
        announce_experiment_point(overrides, extra)
    print(run_line(record, run_dir))
    if record.status != "ok":
        print(f"dlm-bench: run {record.status}: {record.error}", file=sys.stderr)
    return {"ok": 0, "diverged": 3}.get(record.status, 1)


def announce_experiment_point(overrides: list[str], extra: list[str]) -> None:
    """One line on stderr: which grid point a `run experiment=X` takes."""
    experiment = next(o.partition("=")[2] for o in overrides if o.partition("=")[0].lstrip("+~") == "experiment")
    print(f"dlm-bench: experiment={experiment} is a grid; this run is its first point in the keys not named: "
          f"{' '.join(extra)} (name them to choose; dlm-bench sweep experiment={experiment} runs every point)",
          file=sys.stderr, flush=True)


def run_line(record, run_dir) -> str:
    """The one line `dlm-bench run` prints: the task's own test metrics (regression nll/mse, binary nll/error,
    count nll/mre), how training stopped (the iteration cap named, not only converged=False) and any learned
    parameter that ended at its constraint's floor or ceiling (train.at_bound)."""
    from .results.labels import record_variant

    m, t = record.metrics, record.train

    def fmt(v):
        return "-" if v is None else f"{v:.4f}"

    shown = [k for k in ("test_error", "test_mre", "test_mse") if k in m] or ["test_mse"]
    stop = " (hit the iteration cap)" if t.get("stopped") == "iteration_cap" else ""
    bound = t.get("at_bound")
    return (
        f"{record.dataset} {record.model} {record_variant(record.to_dict()) or record.objective} beta={record.beta:g} "
        f"test_nll={fmt(m.get('test_nll'))} "
        + "".join(f"{k}={fmt(m.get(k))} " for k in shown)
        + f"iterations={t['iterations']} converged={t['converged']}{stop} wall_s={t['wall_s']:.1f} "
        + (f"stage1={t['pretrain_model']}{'(reused)' if t.get('pretrain_reused') else ''} "
           f"total_wall_s={t['total_wall_s']:.1f} " if "total_wall_s" in t else "")
        + (f"at_bound=[{bound}] " if bound else "")
        + f"status={record.status} run_dir={run_dir}"
    )


CFG_CHOICES = ("job", "hydra", "all")


def print_config(cfg, part: str = "job") -> int:
    """`dlm-bench run --cfg job|hydra|all` (Hydra's convention): the composed config (job), Hydra's own node
    (hydra) or both (all) as YAML and, for job, as a trailing YAML comment, the run directory the run would write;
    nothing is trained or written."""
    from omegaconf import OmegaConf, open_dict

    from .run import run_dir_for

    if part == "hydra":
        print(OmegaConf.to_yaml({"hydra": cfg.hydra}), end="")
        print("# dlm-bench run writes to run_dir, or <results_dir>/<experiment>/<run name>; hydra.run.dir is not used")
        return 0
    print(OmegaConf.to_yaml(cfg), end="")
    if part == "all":
        with open_dict(cfg):
            del cfg["hydra"]
    print(f"# would write: {run_dir_for(cfg.copy())}")
    return 0


def run_help_epilog() -> str:
    """Hydra-style application help for `dlm-bench run --help`: config groups, their options, the defaults."""
    import re

    from .config.schema import GROUPS, conf_dir, group_options

    defaults = dict(re.findall(r"^\s*-\s*(?:optional\s+)?(\w+):\s*(\S+)", (conf_dir() / "config.yaml").read_text(), re.M))
    lines = ["== Configuration groups ==", "Compose your configuration from these groups (group=option):", ""]
    for group in GROUPS + ("experiment",):
        default = defaults.get(group, "null")
        lines.append(f"  {group} (default: {default}): {', '.join(group_options(group)) or '-'}")
    lines += ["", "Any key can be set with key=value (e.g. objective.beta=0.5 trainer.max_iters=200 seed=1).",
              "--cfg job prints the composed config and the run directory without running; "
              "dlm-bench datasets lists the datasets."]
    return "\n".join(lines)


def _sweep_deadline(args) -> float | None:
    """--time-limit as seconds since the epoch, counted from the command's start (None: no limit)."""
    if args.time_limit is None:
        return None
    from .sweeps.deadline import parse_duration

    try:
        return time.time() + parse_duration(args.time_limit)
    except ValueError as err:
        raise UserError(str(err)) from err


def _sweep_overrides(args) -> list[str]:
    """The command line's overrides, checked (no fixed run_dir, a known experiment), with an absolute results_dir
    (jobs may run in other processes or elsewhere, SLURM), line progress and the --force / --retry-failed flags."""
    from .config.schema import group_options

    check_hydra_overrides(list(args.overrides), "sweep")
    overrides = quote_overrides(list(args.overrides))
    for ov in overrides:
        key, sep, value = ov.partition("=")
        if key == "run_dir" and value not in ("", "null") and "${" not in value and "," not in value:
            raise UserError(f"run_dir={value} in a sweep would put every grid point in one folder; leave it out "
                            "(runs go to <results_dir>/<experiment>/<run name>) or make it vary per job, e.g. run_dir=out/${seed}")
        if key.lstrip("+") == "experiment" and value not in group_options("experiment"):
            raise UserError(f"unknown experiment {value!r}; valid choices: {', '.join(group_options('experiment'))}")
    given = [ov for ov in overrides if ov.startswith("results_dir=")]
    results_dir = plain_value(given[-1]) if given else "results"
    if not results_dir.strip() or results_dir.strip() in ("null", "''", '""'):  # abspath("") is the current directory
        from .registry.validation import check_results_dir

        try:
            check_results_dir("")
        except Exception as err:
            raise UserError(str(err)) from err
    overrides = [ov for ov in overrides if not ov.startswith("results_dir=")]
    overrides += quote_overrides([f"results_dir={os.path.abspath(results_dir)}"])
    overrides += dataset_replaces_presets(overrides)
    if not any(ov.startswith("trainer.progress=") for ov in overrides):
        overrides.append("trainer.progress=lines")  # no bars in a shared log; a line every 10 min (logline.Heartbeat)
    if args.force:
        overrides.append("resume.force=true")
    if args.retry_failed:
        overrides.append("resume.retry_failed=true")
    return overrides


def dataset_replaces_presets(overrides: list[str]) -> list[str]:
    """`dlm_data=null` when the command line names the dataset (dataset=csv, dataset=<name>, dataset.name=) and no
    dlm_data: an experiment that sweeps dlm_data presets (dataset + the paper's M) then runs its grid on the named
    dataset, once, as `run` does (single_point.ALTERNATIVES), instead of a preset putting its own dataset back."""
    from .sweeps.single_point import named_keys

    named = named_keys(overrides)
    if not named & {"dataset", "dataset.name"} or "dlm_data" in named or "experiment" not in named:
        return []
    from .sweeps.plan import experiment_params

    return ["~hydra.sweeper.params.dlm_data"] if "dlm_data" in experiment_params(overrides) else []


def cmd_sweep(args) -> int:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from .sweeps.deadline import DEFERRED_EXIT, set_deadline
    from .sweeps.launch import run_sweep, summary_line
    from .sweeps.plan import dry_run_lines, estimate_line, invalid_points_message, plan_estimate, plan_sweep
    from .sweeps.progress import Progress
    from .sweeps.preflight import preflight

    deadline_at = _sweep_deadline(args)
    overrides = _sweep_overrides(args)
    try:  # every grid point composed and validated before any job starts
        plan = plan_sweep(overrides)
    except (HydraException, OmegaConfBaseException) as err:
        raise UserError(_unknown_key_message(err) or _one_line(err)) from err
    invalid = invalid_points_message(plan)
    if args.dry_run or args.estimate:
        plan, no_data = (plan, None) if invalid else preflight(plan, fetch=False)  # probed, nothing fetched
        if no_data and not args.dry_run:  # `make reproduce-*` runs --estimate first: one line, exit 2
            raise UserError(no_data)
        print("\n".join(dry_run_lines(plan) if args.dry_run else dry_run_lines(plan)[-1:]))
        print(estimate_line(plan))
        if invalid or no_data:
            print(f"dlm-bench: error: {invalid or no_data}", file=sys.stderr)
        return USAGE_EXIT if invalid or no_data else 0
    if invalid:
        raise UserError(invalid)
    if deadline_at is not None and any((p.config or {}).get("launcher", {}).get("name") == "slurm" for p in plan):
        raise UserError("--time-limit applies to launcher=local and launcher=joblib; SLURM jobs have their own "
                        "limit (launcher.time_min)")
    plan, no_data = preflight(plan, fetch=True)  # data validated like config: fetched once here, or one line
    if no_data:
        raise UserError(no_data)
    est, seconds = plan_estimate(plan)
    print(f"sweep: {len(plan)} jobs; {est.line()}", file=sys.stderr, flush=True)
    shown = Progress.for_plan(plan, seconds)
    try:
        with set_deadline(deadline_at):
            counts = run_sweep(overrides, shown)
    except (HydraException, OmegaConfBaseException) as err:
        raise UserError(_unknown_key_message(err) or _one_line(err)) from err
    finally:
        if shown is not None:
            shown.remove()
    print(summary_line(counts))
    if counts["not_run"]:
        return USAGE_EXIT
    return 1 if counts["failed"] or counts["failed_before"] else DEFERRED_EXIT if counts["deferred"] else 0


def cmd_report(args) -> int:
    from pathlib import Path

    from .report import build_report
    from .report.collect import ReportError

    baseline = args.baseline
    dirs = []
    for d in args.dirs:  # report.baseline=LABEL, in the sweep's key=value spelling, is --baseline LABEL
        if d.startswith("report.baseline=") and not Path(d).exists():
            baseline = d.split("=", 1)[1]
        else:
            dirs.append(d)
    if not dirs:
        raise UserError("no results directory given")
    for d in dirs:
        if not Path(d).exists():
            raise UserError(f"no such results directory: {d}")
    out = Path(args.out) if args.out else Path(dirs[0]) / "report"
    try:
        made = build_report(dirs, out, paper=args.paper, baseline=baseline)
    except (ReportError, FileNotFoundError) as err:
        raise UserError(str(err)) from err
    counts = ", ".join(f"{v} {k}" for k, v in sorted(made["counts"].items()))
    print(f"report: {made['runs']} runs ({counts}) -> {out}")
    for p in made["tables"] + made["figures"]:
        print(f"  {p}")
    print(f"  {made['index']} ({len(made['missing'])} missing or unfinished points listed)")
    print(f"  {made['html']} (every table and figure on one page)")
    if made["skipped"]:
        print(f"  skipped {len(made['skipped'])} unusable run.json (listed in index.md)")
    if made.get("skipped_curves"):
        print(f"  skipped {len(made['skipped_curves'])} unusable curve.csv (listed in index.md)")
    for line in made["not_drawn"]:
        print(f"  not drawn: {line}")
    return 0


def cmd_experiments(args) -> int:
    from .config.schema import GROUPS, group_options
    from .registry.names import MODEL_NAMES, OBJECTIVE_NAMES

    for group in GROUPS + ("experiment",):
        print(f"{group + ':':12s} {', '.join(group_options(group)) or '-'}")
    print(f"{'models:':12s} {', '.join(MODEL_NAMES)}")
    print(f"{'objectives:':12s} {', '.join(OBJECTIVE_NAMES)}")
    return 0


def cmd_datasets(args) -> int:
    from .data import datasets_table

    print(datasets_table())
    return 0


def cmd_fetch(args) -> int:
    from .data import DATASETS, fetch
    from .data.fetch import verify

    if not args.all and not args.names and not args.verify:
        raise UserError("name datasets to fetch, or --all (dlm-bench datasets lists them)")
    if args.verify and args.force:
        raise UserError("--verify checks the cache and --force re-fetches: use one at a time")
    unknown = [n for n in args.names if n not in DATASETS]
    if unknown:
        raise UserError(f"unknown dataset {unknown[0]!r}; valid choices: {', '.join(sorted(DATASETS))}")
    if args.verify:
        results = verify(args.names or "all")
        for name, ok, message in results:
            print(f"{'ok  ' if ok else 'FAIL'} {name:16s} {message}", flush=True)
        failed = sum(not ok for _, ok, _ in results)
        print(f"verify: {len(results) - failed} ok, {failed} failed" if results else "verify: nothing cached")
        return 1 if failed else 0
    results = fetch("all" if args.all else args.names, force=args.force, large=args.large)
    failed = [name for name, ok, _ in results if not ok]
    if len(results) == 1 and failed:
        raise UserError(results[0][2])
    for name, ok, message in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name:16s} {message}", flush=True)
    if len(results) > 1:
        print(f"{len(results) - len(failed)} fetched, {len(failed)} failed")
    return USAGE_EXIT if failed else 0


def complete_override(prefix: str, **_) -> list[str]:
    """argcomplete completer for run/sweep overrides: `group=` -> that group's options, else the groups
    (`model=`) and every config key (`trainer.max_iters=`) starting with `prefix`."""
    import dataclasses

    from .config import schema
    from .config.schema import GROUPS, group_options

    groups = GROUPS + ("experiment",)
    key, sep, _ = prefix.partition("=")
    if sep:
        return [f"{key}={o}" for o in group_options(key.lstrip("+~"))] if key.lstrip("+~") in groups else []
    keys = [f"{g}=" for g in groups]
    for f in dataclasses.fields(schema.Config):
        node = f.default_factory() if f.default_factory is not dataclasses.MISSING else None
        if dataclasses.is_dataclass(node):
            keys += [f"{f.name}.{sub.name}=" for sub in dataclasses.fields(node)]
        else:
            keys.append(f"{f.name}=")
    return [k for k in keys if k.startswith(prefix)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlm-bench",
        description="Reproduce and compare the benchmarks of five sparse / variational GP papers.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "run",
        help="run one configuration",
        description="Run one configuration. Overrides use Hydra syntax, e.g. "
        "`dlm-bench run model=svgp objective=dlm objective.beta=0.5 seed=1`.",
        epilog=run_help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("overrides", nargs="*", help="Hydra overrides (group=option, key=value)"
                   ).completer = complete_override
    p.add_argument("--cfg", "-c", nargs="?", const="job", metavar="job|hydra|all",
                   help="print the composed config (job, the default), Hydra's own config (hydra) or both (all), "
                   "and the run directory it would write, then exit (no training)")
    p.add_argument("--multirun", "-m", action="store_true",
                   help="Hydra's multirun: the overrides' comma lists as a grid, run as `dlm-bench sweep` does")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser(
        "sweep",
        help="run a grid of configurations (Hydra multirun), skipping finished runs",
        description="Run the grid an experiment config defines, or an ad-hoc one: "
        "`dlm-bench sweep experiment=dlm_demo launcher=joblib`, `dlm-bench sweep objective=elbo,dlm seed=0,1,2`. "
        "Runs whose run.json says ok/diverged/failed are skipped (see --force, --retry-failed).",
    )
    p.add_argument("overrides", nargs="*", help="Hydra overrides; comma lists and range() sweep"
                   ).completer = complete_override
    p.add_argument("--force", action="store_true", help="re-run every grid point")
    p.add_argument("--retry-failed", action="store_true", help="re-run grid points whose run.json says failed")
    p.add_argument("--dry-run", action="store_true",
                   help="list every grid point, its run name and what the sweep would do with it; run nothing")
    p.add_argument("--estimate", action="store_true",
                   help="print the grid's counts, the sweep's projected wall on this machine with its launcher and "
                   "the CPU time of its new points; run nothing")
    p.add_argument("--time-limit", metavar="DURATION",
                   help="start a point only if --estimate expects it to finish within DURATION (2h30m, 90m, 45s) "
                   "of the command's start; the others are deferred (nothing written, exit 75: run the same command "
                   "again). A point already training is not stopped")
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser("report", help="collect run.json files into results.parquet, tables, figures, index.md, index.html")
    p.add_argument("dirs", nargs="+", help="results directories (searched recursively for run.json); "
                   "report.baseline=LABEL among them is --baseline LABEL")
    p.add_argument("--baseline", help="the method label the paired tables compare with (default: the ELBO-trained "
                   "SVGP where present: 'ELBO (beta=1)', 'SVGP (collapsed ELBO)', 'svgp-elbo (beta=1)')")
    p.add_argument("--paper", help="only runs of this paper key (dlm, pac, sggpm, fp, savigp)")
    p.add_argument("--out", help="output directory (default: <first DIR>/report)")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("experiments", help="list config groups, their options, and the registries")
    p.set_defaults(func=cmd_experiments)
    p = sub.add_parser("datasets", help="table of registered datasets: task, size, papers, availability "
                                        "(shipped / cached / in mirror / download of N MB / no known source)")
    p.set_defaults(func=cmd_datasets)
    p = sub.add_parser(
        "fetch",
        help="download datasets into the cache (DLM_BENCH_DATA); DLM_BENCH_MIRROR replaces the origin",
    )
    p.add_argument("names", nargs="*", help="dataset names (see dlm-bench datasets)")
    p.add_argument("--all", action="store_true", help="every registered dataset that is not shipped (multi-GB downloads only with --large)")
    p.add_argument("--large", action="store_true", help="with --all: include the multi-GB downloads (epsilon training file)")
    p.add_argument("--force", action="store_true", help="fetch again even if cached (replaces the cached copy on success)")
    p.add_argument("--verify", action="store_true",
                   help="re-hash cached files (of NAMEs, default: all cached) against the registry or their sidecar; exit 1 on a mismatch")
    p.set_defaults(func=cmd_fetch)
    return parser


VALUE_OPTIONS = ("--time-limit",)


def glue_option_values(argv: list[str]) -> list[str]:
    """`--time-limit -5m` as `--time-limit=-5m`: argparse takes a value that starts with '-' for an option and prints
    its usage (4 lines); glued, the value reaches its own check and a one-line error."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in VALUE_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") and argv[i + 1] != "--":
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


POSITIONAL_LISTS = {"run": "overrides", "sweep": "overrides", "report": "dirs", "fetch": "names"}


def parse_intermixed(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Hydra's grammar: flags and overrides in any order (`sweep experiment=X --dry-run results_dir=out`,
    `run seed=3 --cfg job trainer.max_iters=3`). argparse fills a positional list from its first run of words only
    (parse_intermixed_args does not take subcommands), so the words after a flag come back unrecognized; they are
    appended, in their order, to the command's list. An unknown flag stays argparse's error."""
    args, extra = parser.parse_known_args(argv)
    field = POSITIONAL_LISTS.get(args.command)
    flags = [a for a in extra if a.startswith("-") and a != "-"]
    if flags or (extra and field is None):
        parser.error(f"unrecognized arguments: {' '.join(flags or extra)}")
    if extra:
        setattr(args, field, list(getattr(args, field) or []) + extra)
    return args


def main(argv: list[str] | None = None) -> int:
    from .run.threads import remember_user_setting

    remember_user_setting()  # OMP_NUM_THREADS set by the user wins in every run and sweep job
    # joblib's loky workers share semaphores with multiprocessing's resource tracker; when Ctrl-C stops a sweep the
    # tracker (a child that inherits this variable) warns about them at its exit, after our one-line message
    os.environ.setdefault("PYTHONWARNINGS", "ignore:resource_tracker:UserWarning")
    from .errors import ConfigError

    try:
        parser = build_parser()
    except ConfigError as err:  # no config tree (a checkout neither installed nor whole): one line
        print(f"dlm-bench: error: {err}", file=sys.stderr)
        return USAGE_EXIT
    if "_ARGCOMPLETE" in os.environ:  # the shell asks for completions (register-python-argcomplete dlm-bench)
        import argcomplete

        argcomplete.autocomplete(parser)
    args = parse_intermixed(parser, glue_option_values(sys.argv[1:] if argv is None else list(argv)))
    try:
        return args.func(args)
    except UserError as err:
        print(f"dlm-bench: error: {err}", file=sys.stderr)
        return USAGE_EXIT
    except BrokenPipeError:
        # the reader of stdout went away (`dlm-bench report ... | head -1`): files already written stay; exit quietly
        # with the status of a SIGPIPE'd tool, and keep Python's exit-time flush from raising again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt as err:
        from .errors import Terminated

        if isinstance(err, Terminated):
            print("dlm-bench: terminated (SIGTERM)", file=sys.stderr)
            return 143
        print("dlm-bench: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if os.environ.get("DLM_BENCH_DEBUG"):
            raise
        print(f"dlm-bench: internal error: {type(err).__name__}: {err} (set DLM_BENCH_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
