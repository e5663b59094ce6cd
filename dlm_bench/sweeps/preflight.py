"""Checks of a planned sweep that need the machine, before any job starts: data is validated like config.

A grid point's data, its device and its launcher are facts of this machine, not of the point: a dataset that cannot
be downloaded here, a CUDA device that is not there, SLURM missing, a bad DLM_BENCH_* setting. Found inside a job,
each would be written as the point's failed run.json, which every later sweep skips (issue 54, 58). Found here, they
are one line, exit 2, nothing written. What is needed and can be had is fetched once, up front, with its size.

`availability` is the only function here that asks data/ where a dataset is; `load_csv` the only one that reads a
user's file. Keep data-facing code in those two.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

HEAD_TIMEOUT_S = 10.0  # a size/reachability probe; the real download keeps data/'s own timeout and retries


@dataclass
class Availability:
    """Where a registered dataset would come from on this machine."""

    name: str
    state: str  # shipped | cached | mirror | download | unavailable
    nbytes: int | None = None  # what a fetch would transfer, where known
    reason: str = ""  # why it is unavailable (one line)

    def needs_fetch(self) -> bool:
        return self.state in ("mirror", "download")

    def size_text(self) -> str:
        return "size unknown" if self.nbytes is None else f"{self.nbytes / 1e6:.1f} MB"


def _head_size(url: str) -> tuple[bool, int | None, str]:
    """(reachable, Content-Length, why not) of a URL, one HEAD request (redirects followed), no retries."""
    import requests

    try:
        r = requests.head(url, allow_redirects=True, timeout=HEAD_TIMEOUT_S)
    except requests.RequestException as exc:
        why = "no connection" if isinstance(exc, requests.ConnectionError) else type(exc).__name__
        return False, None, why
    if r.status_code >= 400 and r.status_code not in (403, 405):  # some servers refuse HEAD but serve GET
        return False, None, f"HTTP {r.status_code}"
    length = r.headers.get("Content-Length")
    return True, int(length) if length and length.isdigit() else None, ""


def availability(name: str, probe: bool = True) -> Availability:
    """Shipped, cached, in the mirror, downloadable (of N bytes) or unavailable (and why), without fetching.
    probe=False skips the network (a remote file is then taken as downloadable, size unknown)."""
    from ..data import DatasetError, get_spec
    from ..data.fetch import is_url, source_of, status

    try:
        spec = get_spec(name)
    except DatasetError as err:
        return Availability(name, "unavailable", reason=str(err))
    state = status(spec)
    if state in ("shipped", "cached"):
        return Availability(name, state)
    if state != "not cached":  # changed in the cache since it was fetched
        return Availability(name, "unavailable", reason=f"the cached copy {state}")
    from ..data.fetch import is_cached

    total, where = 0, "download"
    for rf in spec.files:
        if is_cached(rf):
            continue
        origin = source_of(rf)
        if not is_url(origin):  # a mirror directory
            where = "mirror"
            if not Path(origin).is_file():
                return Availability(name, "unavailable", reason=f"{rf.mirror_path} is not in the mirror {os.environ.get('DLM_BENCH_MIRROR')}")
            total += Path(origin).stat().st_size
            continue
        if os.environ.get("DLM_BENCH_MIRROR"):
            where = "mirror"
        if not probe:
            total = None
            continue
        ok, size, why = _head_size(origin)
        if not ok:
            return Availability(name, "unavailable", reason=f"cannot reach {origin} ({why})")
        total = None if (size is None or total is None) else total + size
    return Availability(name, where, total)


def load_csv(dataset: dict) -> None:
    """Read a `dataset=csv` point's file as its run will (DatasetError: one line naming the file)."""
    from omegaconf import OmegaConf

    from ..data import load_from_config

    load_from_config(OmegaConf.create(dataset))


def datasets_of(configs: list[dict]) -> list[str]:
    return sorted({c["dataset"]["name"] for c in configs if c["dataset"]["name"] != "csv"})


def how_to_provide(names: list[str]) -> str:
    from ..data.fetch import cache_dir

    listed = " ".join(names)
    return (f"run `dlm-bench fetch {listed}` on a machine with network and copy {cache_dir()}, or set "
            f"DLM_BENCH_MIRROR=<directory or URL> to an offline copy (docs/datasets.md)")


def missing_data_message(missing: list[Availability]) -> str:
    names = [a.name for a in missing]
    reasons = "; ".join(f"{a.name}: {a.reason}" for a in missing[:3]) + ("; ..." if len(missing) > 3 else "")
    return (f"the sweep needs dataset{'s' if len(names) > 1 else ''} {', '.join(names)}, not shipped, cached or "
            f"in a mirror, and {'they' if len(names) > 1 else 'it'} cannot be downloaded here ({reasons}); "
            f"{how_to_provide(names)}; nothing was run")


def fetch_up_front(needed: list[Availability]) -> list[Availability]:
    """Fetch each dataset once, saying so with its size; returns those that failed (reason filled in)."""
    from ..data import fetch

    failed = []
    for a in needed:
        origin = "the mirror" if a.state == "mirror" else "its origin"
        print(f"sweep: fetching dataset {a.name} from {origin} ({a.size_text()}) before any job", file=sys.stderr,
              flush=True)
        for name, ok, message in fetch([a.name], progress=False):
            if not ok:
                a.state, a.reason = "unavailable", message
                failed.append(a)
    return failed


def check_environment() -> None:
    """DLM_BENCH_* settings a job would read: a bad value is ConfigError here, not a failed run.json per point."""
    from ..training.stage1_store import env_seconds
    from ..util.logline import Heartbeat

    try:
        Heartbeat.from_env()
        env_seconds("DLM_BENCH_PRETRAIN_WAIT_S", 1.0)
        env_seconds("DLM_BENCH_PRETRAIN_PROGRESS_S", 1.0)
    except ValueError as err:
        raise ConfigError(f"{err}; nothing was run") from None


def check_machine(configs: list[dict]) -> None:
    """The devices and launchers the points ask for exist here (ConfigError, one line)."""
    devices = {str(c.get("device")) for c in configs}
    if "cuda" in devices:
        import torch

        if not torch.cuda.is_available():
            raise ConfigError("device=cuda but torch sees no CUDA device on this machine (use device=auto or "
                              "device=cpu); nothing was run")
    if any((c.get("launcher") or {}).get("name") == "slurm" for c in configs) and shutil.which("sbatch") is None:
        raise ConfigError("launcher=slurm but SLURM's sbatch is not on PATH here (run the sweep on the cluster's "
                          "login node, or use launcher=local / launcher=joblib); nothing was run")


def check_csv(plan) -> str | None:
    """Every distinct `dataset=csv` file of the plan's new points is read once; the first that fails: one line."""
    from ..data import DatasetError

    seen = {}
    for i, p in enumerate(plan):
        if p.config is None or p.config["dataset"]["name"] != "csv":
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
    from ..data import DatasetError

    configs = [p.config for p in plan if p.config is not None]
    try:
        check_environment()
        check_machine(configs)
    except ConfigError as err:
        return plan, str(err)
    bad_csv = check_csv(plan)
    if bad_csv:
        return plan, bad_csv
    found = {name: availability(name) for name in datasets_of(configs)}
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
