"""Projected CPU time of a sweep's new points (`dlm-bench sweep --dry-run` and `--estimate`, `make reproduce-*`).

Two sources, best first:
1. **finished runs of the same settings** in the sweep's results directory (every setting but seed and beta equal):
   their median single-core seconds (a batched member: its group's wall / group size), each scaled to this
   machine by the speed probe its run.json records (`speed_probe.py`; records without one are taken as they are);
2. **a cost model** for the models the shared Trainer fits: seconds = factor x max_iters x (c0 + c1 W), with
   W = B M^2 + M^3 the work of one step (B: minibatch or training size, M: inducing points; the exact GP M = n).
   c0, c1 were fitted by least squares on 405 unbatched joint runs of the committed DLM reproductions (2-core
   x86_64, one thread; median error 20 %); `factor` per (likelihood, hyperparameters, batched) is the median
   measured / modelled ratio of 7600 archived runs (FACTORS). It is recalibrated from the finished runs in the
   results directory: a class with 3 or more finished runs uses their median ratio instead. Two terms the DLM SVGP
   fit could not see: an L-BFGS step (PAC, SGPR, FITC, exact GP) costs OPTIMIZER_FACTORS times an Adam step of the
   same W (line-search evaluations, the collapsed bounds' n M^2 work), and a sampling estimator (bMC, uPS,
   smooth-bMC with L samples) adds C_SAMPLE x B x L per step. A class is (model, optimizer, likelihood,
   hyperparameters, batched). The measured constants are data: cost_model.yaml beside this module.
Models with their own fit loop (lgm_*, sggpm, savigp) have no cost model: finished runs of the same settings estimate
them, else (sggpm, savigp) finished runs of those settings at other sizes, scaled by a power law in the size
(size_scaling.py); otherwise they are counted as "no estimate". Times are single-core seconds (one thread per run, as
the thread rule gives small problems) plus RUN_OVERHEAD_S per run (a batched beta group: per group).

**The sweep's wall on this machine** (issue 75: measured walls were 1.4-2.2x the CPU estimate) adds what the runs'
own seconds do not hold, and the launcher's parallelism (`sweep_wall_seconds`): the sweep process's start and its
plan (SWEEP_START_S, PLAN_POINT_S per grid point), each launcher's start and per-job launch (LAUNCH: every grid point
is a Hydra job, skipped or not), the work spread over the launcher's parallel jobs (a batched beta group is one unit:
its first job trains every member, the others return at once), and the machine's load: with L other runnable
processes on C cores, p processes of the sweep each get min(1, C / (L + p)) of a core (Linux's fair scheduler), L
the 1-minute load average when the estimate is made; where the kernel's autogroup shares the cores between sessions
first, L other sessions with a runnable task leave the sweep's session C / (L + 1) cores for its p processes
(this_load). A load that changes during the sweep is not foreseen. SLURM's queue is not known here: its wall is the jobs' own, without the queue.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

import yaml  # PyYAML: a requirement of omegaconf, which dlm_bench requires

from ..results.speed_probe import machine_ratio, this_machine
from .size_scaling import scaled_seconds, size_key


def _calibration() -> dict:
    """The cost model's measured constants: cost_model.yaml beside this module (facts as data; their measurements
    are described there)."""
    with open(Path(__file__).with_name("cost_model.yaml")) as fh:
        return yaml.safe_load(fh)


@dataclass(frozen=True)
class LaunchCost:
    """A launcher's cost beside the runs (CPU seconds, cost_model.yaml `launch`)."""
    start_s: float  # once per parallel job slot
    job_s: float  # each Hydra job (every grid point, skipped or not)


_CAL = _calibration()
C0, C1 = _CAL["c0"], _CAL["c1"]  # seconds per step, seconds per unit of W
REFERENCE_PROBE_S = _CAL["reference_probe_s"]  # the fitting machine's speed probe
WARN_CPU_HOURS = _CAL["warn_cpu_hours"]
RUN_OVERHEAD_S = _CAL["run_overhead_s"]  # per run (a batched group: per group)
FACTORS = {(lik, hyp, batched): f for lik, hyp, batched, f in _CAL["factors"]}
DEFAULT_FACTOR = _CAL["default_factor"]
OPTIMIZER_FACTORS = {(model, optimizer): f for model, optimizer, f in _CAL["optimizer_factors"]}
C_SAMPLE = _CAL["c_sample"]  # seconds per sampled point per step
SWEEP_START_S, PLAN_POINT_S = _CAL["sweep_start_s"], _CAL["plan_point_s"]
LAUNCH = {name: LaunchCost(**cost) for name, cost in _CAL["launch"].items()}


def settings_key(config: dict) -> str:
    """What a point's cost depends on: its resolved config without seed, beta and where results go. Keys added to
    the config after runs were written (run/naming.py ADDED_LATER) are dropped at their old implicit values and
    removed keys (REMOVED_LATER) dropped, as run names do, so a run.json written before a key existed still counts
    as the same settings."""
    from ..run.naming import REMOVED_LATER, drop_added_later, drop_not_in_name  # here: the harness imports torch

    d = drop_added_later({k: (dict(v) if isinstance(v, dict) else v) for k, v in config.items() if k != "seed"})
    for group, key in REMOVED_LATER:
        if isinstance(d.get(group), dict):
            d[group].pop(key, None)
    obj = dict(d.get("objective") or {})
    for k in ("beta", "beta_index", "beta_batch"):
        obj.pop(k, None)
    d["objective"] = obj
    return json.dumps(drop_not_in_name(d), sort_keys=True, default=str)


def n_train(config: dict) -> int | None:
    """The training size the protocol will give, from the registry's row count (no data loaded)."""
    from ..data import get_spec

    ds, p = config["dataset"], config["protocol"]
    try:
        n = csv_rows(ds["path"]) if ds["name"] == "csv" else get_spec(ds["name"]).shape[0]
    except Exception:  # an unknown size (an unreadable file: the plan's data check names it)
        n = None
    name = p.get("name")
    if n is None:
        return p.get("train_size")
    if name == "dlm_classification":
        size = p.get("train_size") or 2000
        return min(size, n - int(round(0.1 * n)) - min(p.get("test_size") or 1000, n // 2))
    frac = p.get("train_frac") or 0.67  # protocol=pac sets 0.8; pac_appF 1/6 (it was read as 0.8 whatever it said)
    base = int(round(frac * n))
    return min(base, p["train_size"]) if p.get("train_size") else base


def csv_rows(path: str) -> int | None:
    """Data rows of a `dataset=csv` file (parquet: from its footer; text: lines after the header), for the estimate;
    the file itself is read and checked by the sweep's data check (preflight.py)."""
    p = Path(path)
    if p.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return pq.ParquetFile(p).metadata.num_rows
    with open(p, "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return max(lines - 1, 0) or None


def cost_class(config: dict, model: str, likelihood: str | None, batched: bool) -> tuple:
    """What the factor of the cost model is kept (and recalibrated) per."""
    lik = "none" if config["objective"]["name"] == "sq_dlm" else (likelihood or "gaussian")
    hyp = str(config["objective"].get("hyperparameters", "joint"))
    return model, (config.get("trainer") or {}).get("optimizer", "adam"), lik, hyp, batched


def default_factor(cls: tuple) -> float:
    model, optimizer, lik, hyp, batched = cls
    return FACTORS.get((lik, hyp, batched), DEFAULT_FACTOR) * OPTIMIZER_FACTORS.get((model, optimizer), 1.0)


def model_terms(config: dict, model: str) -> tuple[float, float] | None:
    """(the step work's seconds before the class factor, the sampling estimator's seconds), or None (no model: the
    shared Trainer does not fit this model, the registry's ModelSpec.own_loop)."""
    from ..registry.models import MODELS  # here: the registry imports torch, which a plain settings key does not need

    spec = MODELS.get(model)
    if spec is None or spec.own_loop:
        return None
    n = n_train(config)
    if not n:
        return None
    t = config["trainer"]
    M = n if model in ("exact_gp", "pac_gp") else min(config["model"]["num_inducing"], n)
    B = min(t.get("batch_size") or n, n)
    steps = t["max_iters"] if not t.get("epochs") else t["epochs"] * math.ceil(n / B)
    est = config.get("estimator") or {}
    samples = (est.get("num_samples") or 0) if est.get("name") in ("bmc", "ups", "smooth_bmc") else 0
    return steps * (C0 + C1 * (B * M * M + M**3)), steps * C_SAMPLE * B * samples


def modelled_seconds(config: dict, model: str, likelihood: str | None, batched: bool,
                     factors: dict | None = None) -> float | None:
    """The cost model's seconds for one run; `factors`: recalibrated class factors, where a class has them."""
    terms = model_terms(config, model)
    if terms is None:
        return None
    cls = cost_class(config, model, likelihood, batched)
    return (factors or {}).get(cls, default_factor(cls)) * terms[0] + terms[1]


def core_share(others: float, cores: int, jobs: int, grouped: bool = False) -> float:
    """The share of a core each of the sweep's `jobs` processes gets beside `others` competitors on `cores` cores.
    Competitors are processes (CFS shares between runnable tasks), or with `grouped` (the kernel's autogroup: CFS
    shares between sessions first) other sessions: the sweep's session, whose jobs all belong to it, then gets
    cores / (others + 1) of the machine, split between its jobs."""
    if grouped:
        return min(1.0, cores / (others + 1) / jobs)
    return min(1.0, cores / max(others + jobs, 1e-9))


def sweep_wall_seconds(units: list, grid_points: int, launcher: str = "local", parallel: int = 1,
                       load: float = 0.0, cores: int = 2, grouped: bool = False, groups: list = ()) -> float:
    """The sweep's wall on this machine (module docstring). units: the CPU seconds of each unit of work (a run, or a
    batched beta group); groups: the batched groups that train one after another (below); grid_points: every Hydra
    job, skipped points included; parallel: the launcher's jobs at a time; load, grouped: the competitors
    (this_load). Serial part: the sweep's start and plan (one process); then the jobs, spread over `parallel` slots
    (no shorter than the longest unit), each slot getting core_share of a core. SLURM's jobs run on
    the cluster's nodes: no load factor, and its queue is not counted."""
    cost = LAUNCH.get(launcher, LAUNCH["local"])
    slots = max(1, min(parallel, grid_points))
    serial = SWEEP_START_S + PLAN_POINT_S * grid_points
    work = sum(units) + cost.job_s * grid_points + cost.start_s * slots
    # batched groups whose members are next to each other in the grid's order (beta_index swept last) train one after
    # another: while one trains, the next job of its group waits on the group's lock in the other slots
    # (run/batched.py group_lock): 2 groups on joblib's 2 workers did not overlap (2026-12-07)
    longest = max(max(units, default=0.0), sum(groups)) + cost.job_s + cost.start_s
    jobs = max(work / slots, longest)
    here = core_share(load, cores, 1, grouped)
    return serial / here + (jobs if launcher == "slurm" else jobs / core_share(load, cores, slots, grouped))


def launcher_of(config: dict) -> tuple[str, int]:
    """(launcher name, jobs it runs at a time) of a resolved config: local 1, joblib n_jobs, SLURM array_parallelism."""
    launcher = config.get("launcher") or {}
    name = launcher.get("name", "local")
    parallel = {"joblib": launcher.get("n_jobs"), "slurm": launcher.get("array_parallelism")}.get(name) or 1
    return name, int(parallel)


def this_load() -> tuple[float, int, bool]:
    """(competitors, cores this process may use, whether they are sessions) now. Where the kernel's autogroup is on
    (Linux desktops and servers with CONFIG_SCHED_AUTOGROUP: /proc/sys/kernel/sched_autogroup_enabled), CFS shares
    the cores between sessions first: the competitors are the other sessions with a runnable task (the mean of
    SAMPLES looks at /proc, SAMPLE_S apart). On 2026-12-07 here, 7-8 agents' sessions at a load average of 15-16
    gave a sweep a quarter of a core, as 7 others do, where 16 processes would give it an eighth. Elsewhere: the
    1-minute load average (it lags, and counts processes waiting on disk)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    sessions = other_sessions_running()
    if sessions is not None:
        return sessions, cores, True
    try:
        return os.getloadavg()[0], cores, False
    except (OSError, AttributeError):  # no load average: an idle machine
        return 0.0, cores, False


SAMPLES, SAMPLE_S = 5, 0.1


def other_sessions_running() -> float | None:
    """The mean number of other autogroups (sessions) with a runnable task, or None (no autogroup, or no /proc)."""
    try:
        if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() != "1":
            return None
        mine = Path("/proc/self/autogroup").read_text().split()[0]
    except (OSError, IndexError):
        return None
    counts = []
    for i in range(SAMPLES):
        if i:
            time.sleep(SAMPLE_S)
        groups = set()
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if stat.read_text().rsplit(")", 1)[1].split()[0] == "R":
                    groups.add((stat.parent / "autogroup").read_text().split()[0])
            except (OSError, IndexError):  # a process gone meanwhile, or another user's
                continue
        groups.discard(mine)
        counts.append(len(groups))
    return sum(counts) / len(counts)


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


# how the estimate line says its points were counted: Estimate's count -> its words
HOW = {
    "from_runs": "from finished runs of the same settings",
    "from_model": "from the cost model ({cal})",
    "from_sizes": "scaled from finished runs at other sizes (rough)",
    "unknown": "without an estimate (models with their own fit loop: run one point first)",
    "resumed": "resuming from a checkpoint (only the iterations left counted)",
    "beyond_grid": "beyond the beta grid at their training size (not counted: nothing to run)",
}


@dataclass
class Estimate:
    seconds: float = 0.0  # the new points' CPU seconds (single-core): training plus RUN_OVERHEAD_S per run or group
    from_runs: int = 0  # points estimated from finished runs of the same settings
    from_model: int = 0  # points estimated by the cost model
    from_sizes: int = 0  # own-loop points scaled from finished runs of their settings at other sizes (size_scaling.py)
    unknown: int = 0  # points with no estimate (own-loop models without a finished run of the same settings)
    calibrated_on: int = 0  # finished runs the model's factors were recalibrated on
    beyond_grid: int = 0  # beta_index past the grid's end at the point's training size: its run will not train
    resumed: int = 0  # points with a checkpoint: only their remaining iterations are counted
    per_point: list = field(default_factory=list)  # each point's seconds, in the order given (None: no estimate)
    units: list = field(default_factory=list)  # CPU seconds of each unit of work: a run, or a batched beta group
    groups: list = field(default_factory=list)  # the batched beta groups' (also in units)
    grid_points: int | None = None  # Hydra jobs the sweep launches, skipped points included (None: the new points)
    launcher: tuple = ("local", 1)  # launcher_of the points
    load: tuple | None = None  # this_load() the wall is for (competitors, cores, grouped); None: this machine's now

    def add(self, part: "Estimate") -> None:
        """Count another results directory's points in (a sweep whose points write to several)."""
        for name in ("seconds", "from_runs", "from_model", "from_sizes", "unknown", "calibrated_on", "beyond_grid",
                     "resumed", "per_point", "units", "groups"):
            setattr(self, name, getattr(self, name) + getattr(part, name))
        self.launcher = part.launcher

    def wall_seconds(self) -> float:
        """The sweep's wall on this machine at the load given (or now), with its launcher (sweep_wall_seconds)."""
        load, cores, grouped = self._load()
        points = self.grid_points if self.grid_points is not None else len(self.per_point)
        name, parallel = self.launcher
        return sweep_wall_seconds(self.units, points, name, parallel, load, cores, grouped, self.groups)

    def _load(self) -> tuple:
        if self.load is None:
            self.load = this_load()  # read once: the line's words and its wall say the same
        return self.load

    def _wall_part(self) -> str:
        load, cores, grouped = self._load()
        name, parallel = self.launcher
        at_once = "one job at a time" if parallel == 1 else f"{parallel} jobs at a time"
        where = ("on the cluster, without the queue's wait" if name == "slurm"
                 else f"on this machine as loaded now: {load:.1f} other {'sessions' if grouped else 'processes'} "
                      f"running on {cores} core{'s' * (cores != 1)}")
        least = "at least" if self.unknown else "about"
        return f"{least} {_duration(self.wall_seconds())} wall ({where}; launcher={name}, {at_once})"

    def line(self) -> str:
        total = self.from_runs + self.from_model + self.from_sizes + self.unknown
        hours = self.seconds / 3600
        amount = f"{hours:.1f} CPU hours" if hours >= 1 else f"{self.seconds / 60:.1f} CPU minutes"
        points = f"{total} new point{'s' if total != 1 else ''}"
        if self.unknown and self.unknown == total:  # "about 0.0 CPU minutes" would read as "free"
            resumed = f"; {self.resumed} resuming from a checkpoint" if self.resumed else ""
            return (f"estimate: {points}, no estimate: models with their own fit loop have none until a point of the "
                    f"same settings has finished (run one point first, then --estimate again){resumed}")
        cal = f"recalibrated on {self.calibrated_on} finished runs" if self.calibrated_on else "default calibration"
        how = [f"{getattr(self, count)} {text.format(cal=cal)}" for count, text in HOW.items() if getattr(self, count)]
        line = f"estimate: {points}, {self._wall_part()}, {amount} of runs (single-core)"
        line += (": " + "; ".join(how)) if how else ""
        if hours > WARN_CPU_HOURS:
            line += (f"; WARNING: above {WARN_CPU_HOURS:g} CPU hours: consider launcher=slurm, a smaller grid or "
                     "--time-limit")
        return line


def finished_runs(root: Path) -> list[dict]:
    out = []
    for path in Path(root).rglob("run.json"):
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(rec, dict) and rec.get("status") in ("ok", "diverged") and isinstance(rec.get("config"), dict):
            out.append(rec)
    return out


def run_seconds(rec: dict) -> float | None:
    t = rec.get("train") or {}
    if t.get("batched"):
        return (t.get("batch_wall_s") or 0.0) / t["batched"]
    s = t.get("total_wall_s") or t.get("wall_s")
    return float(s) if s is not None else None


def _machine_ratio(rec: dict) -> float:
    """A finished run's seconds x this ratio = its seconds on this machine (speed_probe; 1 for older records).
    A record without a probe returns before this machine is probed, so an archive of older runs costs no probe."""
    recorded = (rec.get("env") or {}).get("speed_probe_s")
    return 1.0 if recorded is None else machine_ratio(recorded, this_machine())


def beyond_grid(config: dict) -> bool:
    """objective.beta_index gives a beta below min_beta at the training size the protocol will give (the run finds
    this only once it has loaded its data, so the sweep's plan still counts such a point as new)."""
    from ..config.beta_grid import OutsideBetaGrid, resolve_beta

    o = config.get("objective") or {}
    if o.get("beta_index") is None or not o.get("beta_grid", True):
        return False
    n = n_train(config)
    if not n:
        return False
    try:
        resolve_beta(_Objective(o), n)
    except OutsideBetaGrid:
        return True
    return False


class _Objective(dict):
    """A plain objective dict read by attribute, as beta.resolve_beta reads a DictConfig."""

    def __getattr__(self, name):
        return self.get(name, 0.01 if name == "min_beta" else None)


def batched_point(config: dict) -> bool:
    """The point trains in a batched beta group (objective.beta_batch on a full-batch SVGP grid point)."""
    o = config["objective"]
    from ..models.beta_group import full_batch  # the SVGP family's rule: minibatch points run unbatched

    minibatch = not full_batch((config.get("trainer") or {}).get("batch_size"), n_train(config))
    return bool(o.get("beta_batch")) and o.get("beta_index") is not None and config["model"]["name"] == "svgp" \
        and o.get("name") in ("elbo", "dlm") and not minibatch


def checkpoint_progress(run_dir: Path | None) -> float:
    """The fraction of a point's training that the checkpoint in its run directory has done (training/checkpoint.py:
    a run stopped part-way resumes there), as whoever saved it wrote it (`progress`). 0 without a checkpoint, with
    one that does not load (the run then starts over) or with one written before checkpoints said their progress."""
    from ..training.checkpoint import CHECKPOINT  # here: it imports torch, which a plan without checkpoints skips

    path = Path(run_dir) / CHECKPOINT if run_dir is not None else None
    if path is None or not path.is_file():
        return 0.0
    import torch

    try:  # the run's own file (RNG states are tuples and numpy arrays: not weights_only)
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception:  # unreadable: the run starts over, as Checkpoint.load decides
        return 0.0
    return min(max(float(state.get("progress") or 0.0), 0.0), 1.0)


def estimate(points: list[tuple[dict, str | None]], root: Path, run_dirs: list | None = None) -> Estimate:
    """points: (resolved config, likelihood) of each new point; root: the results directory to learn from;
    run_dirs: each point's run directory (None: not known), where a checkpoint means only the rest is to train."""
    done = finished_runs(root) if Path(root).is_dir() else []
    same, ratios, sized = defaultdict(list), defaultdict(list), defaultdict(list)
    for rec in done:
        s = run_seconds(rec)
        if s is None:
            continue
        s *= _machine_ratio(rec)
        same[settings_key(rec["config"])].append(s)
        if ks := size_key(rec["config"], settings_key):  # own-loop models with a size rule only
            sized[ks[0]].append((ks[1], s))
        batched = bool((rec.get("train") or {}).get("batched"))
        terms = model_terms(rec["config"], rec["model"])
        if terms and terms[0] > 0:
            ratios[cost_class(rec["config"], rec["model"], rec.get("likelihood"), batched)].append(
                max(s - terms[1], 0.0) / terms[0])
    factors = {k: median(v) for k, v in ratios.items() if len(v) >= 3}
    est = Estimate(calibrated_on=sum(len(v) for k, v in ratios.items() if k in factors))
    groups = defaultdict(int)  # a batched beta group: one job trains all its members and pays the overhead once
    for config, _ in points:
        if (group := trained_group(config)) is not None:
            groups[group] += 1
    scale = None  # this machine's speed against the cost model's (probed only when the model is used)
    units: dict = defaultdict(float)  # a run's or a batched group's CPU seconds
    for i, (config, likelihood) in enumerate(points):
        left = 1.0 - (checkpoint_progress(run_dirs[i]) if run_dirs else 0.0)
        est.resumed += left < 1.0
        if beyond_grid(config):
            est.beyond_grid += 1
            est.per_point.append(0.0)
            continue
        key = settings_key(config)
        group = group_key(config)
        overhead = RUN_OVERHEAD_S / groups[group] if group in groups else RUN_OVERHEAD_S
        m = None
        if same.get(key):
            seconds, est.from_runs = left * median(same[key]), est.from_runs + 1
        else:
            m = modelled_seconds(config, config["model"]["name"], likelihood, batched_point(config), factors)
            ks = size_key(config, settings_key) if m is None and sized else None
            seconds = scaled_seconds(sized[ks[0]], ks[1]) if ks and sized.get(ks[0]) else None
            if seconds is not None:
                seconds, est.from_sizes = left * seconds, est.from_sizes + 1
        if seconds is None and m is None:
            est.unknown += 1
            est.per_point.append(None)
            continue
        if seconds is None:
            if cost_class(config, config["model"]["name"], likelihood, batched_point(config)) in factors:
                factor = 1.0  # recalibrated on finished runs, already in this machine's seconds
            else:
                scale = machine_ratio(REFERENCE_PROBE_S, this_machine()) if scale is None else scale
                factor = scale
            seconds, est.from_model = left * m * factor, est.from_model + 1
        est.seconds += seconds + overhead
        est.per_point.append(seconds + overhead)
        units[group if group in groups else i] += seconds + overhead
    est.units = list(units.values())
    keys = [group_key(c) for c, _ in points if batched_point(c)]
    if any(x == y for x, y in zip(keys, keys[1:])):  # a group's members next to each other in the grid's order
        est.groups = [v for k, v in units.items() if k in groups]
    est.launcher = launcher_of(points[0][0]) if points else ("local", 1)
    return est


def trained_group(config: dict) -> tuple | None:
    """The batched beta group a point trains in (one job trains all its members), or None (it trains alone)."""
    return group_key(config) if batched_point(config) and not beyond_grid(config) else None


def group_key(config: dict) -> tuple:
    """A batched beta group: the settings but beta (settings_key) and the seed (a group is one method, size, seed)."""
    return settings_key(config), config.get("seed")
