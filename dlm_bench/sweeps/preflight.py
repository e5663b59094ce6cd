"""Checks of a planned sweep that need the machine, before any job starts: data is validated like config.

A grid point's data, its device and its launcher are facts of this machine, not of the point: a dataset that cannot
be downloaded here, a CUDA device that is not there, SLURM missing, a bad DLM_BENCH_* setting. Found inside a job,
each would be written as the point's failed run.json, which every later sweep skips (issue 54, 58). Found here, they
are one line, exit 2, nothing written. What is needed and can be had is fetched once, up front, with its size.

Where a dataset would come from is data/'s answer (`data.locate(name, probe=True)`, the same function as
`dlm-bench datasets`); `load_csv` is the only function here that reads a user's file.
"""

from __future__ import annotations

import shutil
import sys

from ..errors import ConfigError


def load_csv(dataset: dict) -> None:
    """Read a `dataset=csv` point's file as its run will (DatasetError: one line naming the file)."""
    from omegaconf import OmegaConf

    from ..data import load_from_config

    load_from_config(OmegaConf.create(dataset))


def datasets_of(configs: list[dict]) -> list[str]:
    """The registered datasets the configs fetch (not csv, not a named dataset read from the user's dataset.path)."""
    return sorted({c["dataset"]["name"] for c in configs if c["dataset"]["name"] != "csv" and not c["dataset"].get("path")})


def how_to_provide(names: list[str]) -> str:
    from ..data.fetch import cache_dir

    listed = " ".join(names)
    return (f"run `dlm-bench fetch {listed}` on a machine with network and copy {cache_dir()}, or set "
            f"DLM_BENCH_MIRROR=<directory or URL> to an offline copy (docs/datasets.md)")


def missing_data_message(missing: list) -> str:
    names = [a.name for a in missing]
    reasons = "; ".join(f"{a.name}: {a.reason}" for a in missing[:3]) + ("; ..." if len(missing) > 3 else "")
    return (f"the sweep needs dataset{'s' if len(names) > 1 else ''} {', '.join(names)}, not shipped, cached or "
            f"in a mirror, and {'they' if len(names) > 1 else 'it'} cannot be downloaded here ({reasons}); "
            f"{how_to_provide(names)}; nothing was run")


def fetch_up_front(needed: list) -> list:
    """Fetch each dataset once, saying so with its size; returns those that failed (reason filled in)."""
    from ..data import fetch

    failed = []
    for a in needed:
        print(f"sweep: fetching dataset {a.name} from {a.origin_text()} ({a.size_text()}) before any job", file=sys.stderr,
              flush=True)
        for name, ok, message in fetch([a.name]):
            if not ok:
                a.state, a.reason = "unavailable", message
                failed.append(a)
    return failed


def check_environment() -> None:
    """DLM_BENCH_* settings a job would read: a bad value is ConfigError here, not a failed run.json per point
    (`run` makes the same check: registry/validation.py check_environment)."""
    from ..registry.validation import check_environment as check

    try:
        check()
    except ConfigError as err:
        raise ConfigError(f"{err}; nothing was run") from None


def check_machine(configs: list[dict], launching: bool = True) -> None:
    """The devices and launchers the points ask for exist here (ConfigError, one line). Not launching (--dry-run,
    --estimate): a missing sbatch is a note, the points are still listed (planned here, submitted on the cluster)."""
    devices = {str(c.get("device")) for c in configs}
    if "cuda" in devices:
        import torch

        if not torch.cuda.is_available():
            raise ConfigError("device=cuda but torch sees no CUDA device on this machine (use device=auto or "
                              "device=cpu); nothing was run")
    if any((c.get("launcher") or {}).get("name") == "slurm" for c in configs) and shutil.which("sbatch") is None:
        if not launching:
            print("sweep: note: launcher=slurm but SLURM's sbatch is not on PATH here; the sweep itself must run on "
                  "the cluster's login node", file=sys.stderr)
            return
        raise ConfigError("launcher=slurm but SLURM's sbatch is not on PATH here (run the sweep on the cluster's "
                          "login node, or use launcher=local / launcher=joblib); nothing was run")


def check_csv(plan) -> str | None:
    """Every distinct `dataset=csv` file (and dataset.path of a named dataset) of the plan's new points is read once;
    the first that fails: one line."""
    from ..data import DatasetError

    seen = {}
    for i, p in enumerate(plan):
        if p.config is None or (p.config["dataset"]["name"] != "csv" and not p.config["dataset"].get("path")):
            continue
        key = repr(sorted(p.config["dataset"].items()))
        if key not in seen:
            try:
                load_csv(p.config["dataset"])
                seen[key] = None
            except (DatasetError, OSError, ValueError) as err:
                seen[key] = f"grid point {i} ({p.shown or ' '.join(p.overrides)}): {err}"
        if seen[key]:
            return seen[key] + "; nothing was run"
    return None


def preflight(plan: list, fetch: bool) -> tuple[list, str | None]:
    """The plan with points whose data cannot be had marked `no_data`, and the one-line error (None: all good).
    fetch: download what is needed now, once (a sweep); else only probe (--dry-run, --estimate)."""
    from ..data import DatasetError, locate

    configs = [p.config for p in plan if p.config is not None]
    try:
        check_environment()
        check_machine(configs, launching=fetch)
    except ConfigError as err:
        return plan, str(err)
    bad_csv = check_csv(plan)
    if bad_csv:
        return plan, bad_csv
    found = {name: locate(name, probe=True) for name in datasets_of(configs)}
    missing = [a for a in found.values() if a.state == "unavailable"]
    if fetch and not missing:
        try:
            missing = fetch_up_front([a for a in found.values() if a.needs_fetch()])
        except (DatasetError, OSError) as err:  # a full disk, a read-only cache: the machine's, one line
            return plan, f"cannot fetch the sweep's data: {type(err).__name__}: {err}; nothing was run"
    if not missing:
        return plan, None
    gone = {a.name: a for a in missing}
    marked = [p._replace(state="no_data", reason=gone[p.config["dataset"]["name"]].reason)
              if p.config is not None and p.config["dataset"]["name"] in gone else p for p in plan]
    return marked, missing_data_message(missing)
