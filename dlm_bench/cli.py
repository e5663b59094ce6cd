# PYTHON_ARGCOMPLETE_OK
"""`dlm-bench`: thin command-line entry point: argparse and dispatch. Subcommands: run, sweep, report, experiments,
datasets, fetch; the bodies of run and sweep live in sweeps/commands.py, report's in report/command.py, fetch's in
data/fetch_command.py.
Shell completion (commands, options, config groups and their options, config keys) through argcomplete:
`eval "$(register-python-argcomplete dlm-bench)"` in bash or zsh (README.md)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .errors import USAGE_EXIT, UserError


def command(target: str):
    """A subcommand's body, `module:function` under dlm_bench, imported when it runs: --help and completion load
    neither the commands nor what they drive."""
    module, name = target.split(":")
    return lambda args: getattr(importlib.import_module(f"dlm_bench.{module}"), name)(args)


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
    p.set_defaults(func=command("sweeps.commands:run_command"))
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
    p.set_defaults(func=command("sweeps.commands:sweep_command"))
    p = sub.add_parser("report", help="collect run.json files into results.parquet, tables, figures, index.md, index.html")
    p.add_argument("dirs", nargs="+", help="results directories (searched recursively for run.json); "
                   "report.baseline=LABEL among them is --baseline LABEL")
    p.add_argument("--baseline", action="append", help="the method label the paired tables compare with (default: the "
                   "ELBO-trained SVGP where present: 'ELBO (beta=1)', 'SVGP (collapsed ELBO)', 'svgp-elbo (beta=1)'); "
                   "again for more tables: <experiment>_paired_vs_<label>")
    p.add_argument("--paper", help="only runs of this paper key (dlm, pac, sggpm, fp, savigp)")
    p.add_argument("--out", help="output directory (default: <first DIR>/report)")
    p.set_defaults(func=command("report.command:report_command"))
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
    p.set_defaults(func=command("data.fetch_command:fetch_command"))
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
