"""Sweep progress (issue 57): a line as each job starts and ends, with k/N, the time elapsed and the time left.

The jobs may run in this process (launcher=local), in loky workers (joblib) or on other nodes (SLURM), so they do
not print the count themselves: each appends `start|end <job number> <time> [outcome]` to an events file the sweep
names in DLM_BENCH_PROGRESS_FILE (in the results directory: a cluster's shared file system), one short O_APPEND
write per event (atomic on a local file system, and a lost line only costs a progress line). The sweep's process
reads the file in a thread and shows it: a tqdm bar on a terminal, plain lines elsewhere (logs, SLURM output).

Jobs that another sweep on the same results directory trains (its lock, sweeps/job.py) end as "running_elsewhere"
or "done_elsewhere": they are not left to this sweep and do not count in the measured / estimated ratio below.

Time left = the cost model's seconds of the jobs not yet finished (plan.plan_estimate, in this machine's speed by the
speed probe) x the ratio measured / estimated of the jobs that finished (1 before the first), x the load factor
max(1, loadavg / cores) (os.getloadavg: a loaded machine gives each job less than a core), / the jobs that run at
once. Jobs without an estimate (own-loop models) count as the mean measured job once one finished. Once another sweep
has taken one of this sweep's points (an ELSEWHERE end), the sweeps whose events files in the same folder belong to
live processes on this host share what is left: it is divided by their number too (two processes running the same
command showed twice the true time left). Without that evidence another sweep may run another grid, and only the
load factor counts it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from ..util.locks import pid_alive
from ..util.logline import current_job

PROGRESS_ENV = "DLM_BENCH_PROGRESS_FILE"
POLL_S = 0.5
ELSEWHERE = ("running_elsewhere", "done_elsewhere")  # end events of jobs another sweep trains or trained
MEASURED = ("ok", "diverged", "failed")  # end events of jobs this sweep trained


def announce(event: str, outcome: str = "") -> None:
    """In a job: append this job's start / end to the sweep's events file (nothing outside a sweep, nor outside a
    numbered job: a test calling sweep_job directly). The number is the one sweep_job passed to util/logline.py."""
    path = os.environ.get(PROGRESS_ENV)
    num = current_job()
    if not path or num is None:
        return
    line = f"{event} {num} {time.time():.3f} {outcome}\n".encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except OSError:  # progress is best effort; the job's result does not depend on it
        pass


def load_factor() -> float:
    """max(1, 1-minute load average / cores): how much longer a job takes than on an idle machine."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:
        return 1.0


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """Reads the events file and tells how far the sweep is. `estimates`: each job's single-core seconds in Hydra's
    job order (0: will not run; None: unknown); `parallel`: jobs at once (joblib's n_jobs; 1 for local); `groups`:
    job -> its batched beta group, for the jobs that train in one (the first of a group's jobs to run trains them all)."""

    def __init__(self, path: Path, estimates: list, parallel: int, skip=(), clock=time.time, load=load_factor,
                 groups: dict | None = None):
        self.path, self.estimates, self.parallel = Path(path), list(estimates), max(1, parallel)
        self.groups = dict(groups or {})
        self.clock, self.load = clock, load
        self.t0 = clock()
        self.started: dict[int, float] = {}
        # jobs the plan knows will not train (done, failed before, not applicable) count as done from the start
        self.planned_skip = set(skip)
        self.ended: dict[int, tuple[float, str]] = {num: (self.t0, "skipped") for num in skip}
        self._offset = 0

    @classmethod
    def for_plan(cls, plan: list, estimates: list) -> "Progress | None":
        """The display for a planned sweep: events file under <results_dir>/.sweep-progress/ (None if it cannot be
        made: the sweep then runs without progress lines)."""
        from .cost_estimate import launcher_of

        configs = [p.config for p in plan if p.config is not None]
        if not configs:
            return None
        parallel = launcher_of(configs[0])[1]
        folder = Path(configs[0]["results_dir"]) / ".sweep-progress"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        path = folder / f"{os.getpid()}-{int(time.time())}.events"
        skip = [i for i, p in enumerate(plan) if p.config is None]
        return cls(path, estimates, min(parallel, max(1, len(configs))), skip, groups=batched_groups(plan))

    def remove(self) -> None:
        try:
            self.path.unlink()
            self.path.parent.rmdir()  # only when no other sweep's file is there
        except OSError:
            pass

    @property
    def total(self) -> int:
        return len(self.estimates)

    @property
    def skipped(self) -> int:
        return sum(1 for num, (_, o) in self.ended.items() if o == "skipped" and num not in self.started)

    def read(self) -> list[str]:
        """New events as lines to print."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return []
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        out = []
        for raw in complete.decode(errors="replace").splitlines():
            parts = raw.split()
            if len(parts) < 3 or not parts[1].isdigit():
                continue
            event, num, at = parts[0], int(parts[1]), float(parts[2])
            if event == "start":
                self.started[num] = at
                out.append(f"sweep: job #{num} started ({len(self.started) + self.skipped}/{self.total}), "
                           f"elapsed {fmt(self.clock() - self.t0)}, about {fmt(self.left())} left")
            elif event == "end" and num not in self.planned_skip:
                outcome = parts[3] if len(parts) > 3 else "?"
                self.ended[num] = (at, outcome)
                out.append(f"sweep: job #{num} {self._ended_how(num, outcome, at)} ({len(self.ended)}/{self.total} "
                           f"done), elapsed {fmt(self.clock() - self.t0)}, about {fmt(self.left())} left")
        return out

    def _ended_how(self, num: int, outcome: str, at: float) -> str:
        if num in self.started:
            return f"{outcome} in {fmt(at - self.started[num])}"
        if outcome == "running_elsewhere":
            return "left to another sweep (it holds the point's lock)"
        if outcome == "done_elsewhere":
            return "skipped (finished by another sweep)"
        # a job with no start event: a batched beta group's member, written by its group's job
        return f"{outcome} (written by its group's job)"

    def trained_groups(self) -> set:
        """The batched beta groups whose training job has ended: every member is then written, whether or not its
        own job has ended `skipped` yet."""
        return {self.groups[n] for n, (_, o) in self.ended.items() if n in self.started and o in MEASURED
                and n in self.groups}

    def done(self, num: int, trained: set) -> bool:
        return num in self.ended or (num in self.groups and self.groups[num] in trained)

    def ratio(self) -> float:
        """measured / estimated seconds over the jobs that finished in this sweep (1 before the first). A batched
        beta group's job trains its members: their estimates count with the group's measured time as soon as that
        job ends (counted only as their own jobs ended `skipped`, the first lines after a group of 10 said 10x the
        time left). A job left to another sweep counts for neither: this sweep did not train it."""
        measured = estimated = 0.0
        trained = self.trained_groups()
        for num, est in enumerate(self.estimates):
            at, outcome = self.ended.get(num, (None, None))
            if num in self.planned_skip or outcome in ELSEWHERE or not self.done(num, trained):
                continue
            if outcome in MEASURED and num in self.started:
                measured += at - self.started[num]
            estimated += est or 0.0
        return measured / estimated if estimated > 0 and measured > 0 else 1.0

    def mean_measured(self) -> float | None:
        took = [at - self.started[n] for n, (at, o) in self.ended.items() if n in self.started and o in ("ok", "diverged")]
        return sum(took) / len(took) if took else None

    def left(self) -> float | None:
        """Wall seconds left: the unfinished jobs' estimates, refined and scaled (see the module docstring)."""
        ratio, mean, now = self.ratio(), self.mean_measured(), self.clock()
        # the cost model is in idle single-core seconds: the load factor applies until finished jobs measured it
        scale = ratio if any(o in ("ok", "diverged") for _, o in self.ended.values()) else self.load()
        left, trained = 0.0, self.trained_groups()
        for num, est in enumerate(self.estimates):
            if self.done(num, trained):
                continue
            if est is None:
                if mean is None:
                    return None
                est, one = mean, 1.0
            else:
                one = scale
            job = est * one
            if num in self.started:  # running: what it has done so far is not left
                job = max(job - (now - self.started[num]), 0.0)
            left += job
        return left / (self.parallel * self.sharing())

    def sharing(self) -> int:
        """1 + the other live sweeps that take this sweep's points (module docstring); 1 before any is seen."""
        if not any(o in ELSEWHERE for _, o in self.ended.values()):
            return 1
        return 1 + sum(1 for f in self.path.parent.glob("*.events") if f != self.path and _live(f))


def batched_groups(plan: list) -> dict:
    """job number -> its batched beta group (cost_estimate.trained_group), for the plan's new points that train in one."""
    from .cost_estimate import trained_group

    groups = {i: trained_group(p.config) for i, p in enumerate(plan) if p.config is not None}
    return {i: g for i, g in groups.items() if g is not None}


def _live(events: Path) -> bool:
    """Whether the process that named an events file `<pid>-<time>.events` (Progress.for_plan) is running here."""
    pid = events.name.split("-", 1)[0]
    return pid.isdigit() and pid_alive(int(pid))


class Monitor:
    """The thread that shows a sweep's progress while its jobs run: tqdm on a terminal, lines elsewhere."""

    def __init__(self, progress: Progress, stream=None):
        self.progress, self.stream = progress, stream or sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dlm-bench-sweep-progress", daemon=True)
        self.bar = None
        if self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=progress.total, unit="job", file=self.stream, dynamic_ncols=True, desc="sweep")

    def __enter__(self) -> "Monitor":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._show()  # the last events
        if self.bar is not None:
            self.bar.close()

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            self._show()

    def _show(self) -> None:
        lines = self.progress.read()
        if self.bar is not None:
            if lines:
                self.bar.n = len(self.progress.ended)
                self.bar.set_postfix_str(f"about {fmt(self.progress.left())} left", refresh=False)
                self.bar.refresh()
            return
        for line in lines:
            print(line, file=self.stream, flush=True)
