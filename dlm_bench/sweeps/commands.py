"""`dlm-bench run` and `dlm-bench sweep`: the commands' bodies (cli.py parses the command line and dispatches here).
run composes one point (sweeps/compose.py) and executes it (run/); sweep plans the grid (plan.py), checks its data
(preflight.py) and launches it (launch.py). Errors of the command line are UserErrors: one line, exit 2."""

from __future__ import annotations

import argparse
import os
import sys
import time

from ..errors import USAGE_EXIT, UserError
from .compose import (check_experiment, check_hydra_overrides, compose_config, compose_errors, composition_message,
                      plain_value, quote_overrides)

CFG_CHOICES = ("job", "hydra", "all")

def run_command(args) -> int:
    """`dlm-bench run`: one configuration composed (its command-line errors first), then executed or, with --cfg,
    printed; `run -m` is the sweep. The exit status: 0 ok, 3 diverged, 1 failed, 2 a user error."""
    overrides = list(args.overrides)
    if args.cfg is not None and args.cfg not in CFG_CHOICES:  # `--cfg key=value`: the value is an override
        overrides.insert(0, args.cfg)
        args.cfg = "job"
    if args.multirun:  # Hydra's habit: `run -m seed=0,1` is the sweep
        if args.cfg is not None:
            raise UserError("--cfg prints one run's config; for a grid use dlm-bench sweep --dry-run")
        print("dlm-bench: run -m runs dlm-bench sweep (finished points are skipped; dlm-bench sweep --help)",
              file=sys.stderr, flush=True)
        return sweep_command(argparse.Namespace(overrides=overrides, force=False, retry_failed=False, dry_run=False,
                                                estimate=False, time_limit=None))
    cfg = compose_config(overrides, hydra_config=args.cfg in ("hydra", "all"))  # the command line's own errors first
    from .single_point import experiment_point

    extra = experiment_point(quote_overrides(overrides))
    if extra:
        overrides += extra
        cfg = compose_config(overrides, hydra_config=args.cfg in ("hydra", "all"))
    if args.cfg is not None:
        if extra:
            announce_experiment_point(overrides, extra)
        return print_config(cfg, args.cfg)
    # imported once the command line is known good: a mistyped value is said without loading torch (~3 s)
    from ..config.beta_grid import OutsideBetaGrid
    from ..data import DatasetError
    from ..errors import ConfigError, ResultsNotWritten
    from ..run import execute

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
    from ..results.labels import record_variant

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


def print_config(cfg, part: str = "job") -> int:
    """`dlm-bench run --cfg job|hydra|all` (Hydra's convention): the composed config (job), Hydra's own node
    (hydra) or both (all) as YAML and, for job, as a trailing YAML comment, the run directory the run would write;
    nothing is trained or written."""
    from omegaconf import OmegaConf, open_dict

    from ..run import run_dir_for

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


def _sweep_deadline(args) -> float | None:
    """--time-limit as seconds since the epoch, counted from the command's start (None: no limit)."""
    if args.time_limit is None:
        return None
    from .deadline import parse_duration

    try:
        return time.time() + parse_duration(args.time_limit)
    except ValueError as err:
        raise UserError(str(err)) from err


def _sweep_overrides(args) -> list[str]:
    """The command line's overrides, checked (no fixed run_dir, a known experiment), with an absolute results_dir
    (jobs may run in other processes or elsewhere, SLURM), line progress and the --force / --retry-failed flags."""
    check_hydra_overrides(list(args.overrides), "sweep")
    overrides = quote_overrides(list(args.overrides))
    for ov in overrides:
        key, sep, value = ov.partition("=")
        if key == "run_dir" and value not in ("", "null") and "${" not in value and "," not in value:
            raise UserError(f"run_dir={value} in a sweep would put every grid point in one folder; leave it out "
                            "(runs go to <results_dir>/<experiment>/<run name>) or make it vary per job, e.g. run_dir=out/${seed}")
        if key.lstrip("+") == "experiment":
            check_experiment(value)
    given = [ov for ov in overrides if ov.startswith("results_dir=")]
    results_dir = plain_value(given[-1]) if given else "results"
    if not results_dir.strip() or results_dir.strip() in ("null", "''", '""'):  # abspath("") is the current directory
        from ..registry.validation import check_results_dir

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
    from .single_point import named_keys

    named = named_keys(overrides)
    if not named & {"dataset", "dataset.name"} or "dlm_data" in named or "experiment" not in named:
        return []
    from .hydra_app import experiment_params

    return ["~hydra.sweeper.params.dlm_data"] if "dlm_data" in experiment_params(overrides) else []


def sweep_command(args) -> int:
    """`dlm-bench sweep`: every grid point planned and validated, its data checked, then launched (or listed:
    --dry-run, --estimate). The exit status: 0, 1 (a point failed), 2 (not run), 75 (points deferred)."""
    from .deadline import DEFERRED_EXIT, set_deadline
    from .plan import dry_run_lines, invalid_points_message, plan_estimate, plan_sweep
    from .progress import Progress
    from .preflight import preflight

    deadline_at = _sweep_deadline(args)
    overrides = _sweep_overrides(args)
    try:  # every grid point composed and validated before any job starts
        plan = plan_sweep(overrides)
    except compose_errors() as err:
        raise UserError(composition_message(err)) from err
    invalid = invalid_points_message(plan)
    if args.dry_run or args.estimate:
        plan, no_data = (plan, None) if invalid else preflight(plan, fetch=False)  # probed, nothing fetched
        if no_data and not args.dry_run:  # `make reproduce-*` runs --estimate first: one line, exit 2
            raise UserError(no_data)
        print("\n".join(dry_run_lines(plan) if args.dry_run else dry_run_lines(plan)[-1:]))
        print(plan_estimate(plan)[0].line())
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
    from .launch import run_sweep, summary_line  # here: it loads torch (~2 s), which a refused command line never needs

    est, seconds = plan_estimate(plan)
    print(f"sweep: {len(plan)} jobs; {est.line()}", file=sys.stderr, flush=True)
    shown = Progress.for_plan(plan, seconds)
    try:
        with set_deadline(deadline_at):
            counts = run_sweep(overrides, shown)
    except compose_errors() as err:
        raise UserError(composition_message(err)) from err
    finally:
        if shown is not None:
            shown.remove()
    print(summary_line(counts))
    if counts["not_run"]:
        return USAGE_EXIT
    return 1 if counts["failed"] or counts["failed_before"] else DEFERRED_EXIT if counts["deferred"] else 0
