"""Sweep progress (sweeps/progress.py, issue 57): the events a job writes, the lines shown, and the time left
against a hand computation of its rule (estimates x measured/estimated ratio x load, / parallel jobs)."""

from __future__ import annotations

import pytest

from dlm_bench.sweeps.progress import Progress, fmt


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def write(path, *lines):
    with open(path, "a") as f:
        f.write("".join(line + "\n" for line in lines))


def test_time_left_before_any_job_is_the_estimate_scaled_by_load_over_parallel_jobs(tmp_path):
    clock = Clock()
    p = Progress(tmp_path / "e", [10.0, 20.0, 30.0, 0.0], parallel=2, skip=[3], clock=clock, load=lambda: 1.5)
    assert p.left() == pytest.approx((10 + 20 + 30) * 1.5 / 2)
    assert p.read() == []  # no events file yet


def test_finished_jobs_refine_the_estimate_and_lines_count_k_of_n(tmp_path):
    clock = Clock()
    ev = tmp_path / "e"
    p = Progress(ev, [10.0, 20.0, 30.0, 0.0], parallel=1, skip=[3], clock=clock, load=lambda: 1.5)
    write(ev, "start 0 1000.0", "end 0 1025.0 ok", "start 1 1025.0")  # job 0 took 25 s for 10 estimated: ratio 2.5
    clock.t = 1030.0
    lines = p.read()
    assert lines[0].startswith("sweep: job #0 started (2/4)")  # the skipped point counts
    assert lines[1].startswith("sweep: job #0 ok in 25s (2/4 done), elapsed 30s")
    assert lines[2].startswith("sweep: job #1 started (3/4)")
    # job 1: 20 x 2.5 = 50, 5 s done -> 45; job 2: 30 x 2.5 = 75; the load factor no longer applies (measured)
    assert p.left() == pytest.approx(45 + 75)
    assert lines[2].endswith("about 2m00s left")
    write(ev, "end 1 10")  # a torn line: ignored
    write(ev, "start 2 1080.0")
    clock.t = 1080.0
    assert p.read()[-1].startswith("sweep: job #2 started (4/4)")


def test_jobs_without_an_estimate_use_the_mean_measured_job(tmp_path):
    clock = Clock()
    ev = tmp_path / "e"
    p = Progress(ev, [None, None], parallel=1, clock=clock, load=lambda: 1.0)
    assert p.left() is None
    write(ev, "start 0 1000", "end 0 1040 ok")
    clock.t = 1040.0
    p.read()
    assert p.left() == pytest.approx(40.0)


@pytest.mark.parametrize("s,text", [(None, "?"), (5, "5s"), (65, "1m05s"), (3725, "1h02m")])
def test_fmt(s, text):
    assert fmt(s) == text


def test_a_batched_groups_members_count_against_the_groups_measured_time(tmp_path):
    """The group's job trains 3 members (30 s for 3 x 5 s estimated); the members' own jobs end `skipped`: the ratio
    becomes 30 / 15 = 2 once they have ended, and a planned skip's end line is not shown again."""
    clock = Clock()
    ev = tmp_path / "e"
    p = Progress(ev, [5.0, 5.0, 5.0, 5.0, 0.0], parallel=1, skip=[4], clock=clock, load=lambda: 1.0)
    write(ev, "start 0 1000", "end 0 1030 ok", "end 1 1031 skipped", "end 2 1031 skipped", "end 4 1031 skipped")
    clock.t = 1031.0
    lines = p.read()
    assert len(lines) == 4 and lines[-1].startswith("sweep: job #2 skipped (written by its group's job) (4/5 done)")
    assert lines[1].startswith("sweep: job #0 ok in 30s (2/5 done)") and not any(" in ?" in line for line in lines)
    assert p.ratio() == pytest.approx(2.0)
    assert p.left() == pytest.approx(5.0 * 2.0)


def test_a_groups_members_are_done_when_its_job_ends_before_their_own_jobs_skip(tmp_path):
    """10 betas batched (5 s each estimated, the group's job took 55 s) and one unbatched job of 20 s left. Right after
    the group's job ends, before any member's own job has ended `skipped`: ratio 55 / 50 = 1.1, and only the last job
    is left (22 s). Counting the members only as they skipped gave 55 / 5 = 11 and 9 x 5 s + 20 s left at that ratio
    (the diabetes sweep's "about 7h47m left" that ended in 19 minutes)."""
    clock = Clock()
    ev = tmp_path / "e"
    p = Progress(ev, [5.0] * 10 + [20.0], parallel=1, clock=clock, load=lambda: 1.0, groups={i: "g" for i in range(10)})
    write(ev, "start 0 1000", "end 0 1055 ok")
    clock.t = 1055.0
    p.read()
    assert p.ratio() == pytest.approx(1.1)
    assert p.left() == pytest.approx(20.0 * 1.1)
    write(ev, *(f"end {i} 1056 skipped" for i in range(1, 10)))
    p.read()
    assert p.ratio() == pytest.approx(1.1) and p.left() == pytest.approx(22.0)  # unchanged once they skip


def test_the_plans_batched_points_form_groups_by_method_and_seed():
    """for_plan's groups: the batched points of one (settings, seed) share a group; an unbatched point has none."""
    from dlm_bench.sweeps.plan import plan_sweep
    from dlm_bench.sweeps.progress import batched_groups

    plan = plan_sweep(["method=dlm,elbo", "objective.beta_index=0,1,2", "objective.beta_batch=true", "seed=0,1",
                       "dataset=boston"])
    groups = batched_groups(plan)
    shown = {i: p.shown for i, p in enumerate(plan)}
    dlm = [i for i in groups if "method=dlm" in shown[i]]
    assert len(dlm) == 6 and len({groups[i] for i in dlm}) == 2  # 3 betas x 2 seeds: one group a seed
    assert all("method=elbo" not in shown[i] for i in groups)  # ELBO at beta = 1: no grid, no group


def test_jobs_another_sweep_trains_are_not_left_and_not_in_the_ratio(tmp_path):
    """Two sweeps sharing a results directory: this one trained job 0 (20 s for 10 estimated, ratio 2); job 1 was
    locked by the other sweep and job 2 finished by it after this sweep planned. Neither is left to this sweep, and
    their estimates do not dilute the ratio (before, they counted as group members: ratio 20 / 30 and 20 / 40)."""
    clock = Clock()
    ev = tmp_path / "e"
    p = Progress(ev, [10.0, 10.0, 10.0, 10.0], parallel=1, clock=clock, load=lambda: 1.0)
    write(ev, "start 0 1000", "end 0 1020 ok", "end 1 1020 running_elsewhere", "end 2 1021 done_elsewhere")
    clock.t = 1021.0
    lines = p.read()
    assert lines[2].startswith("sweep: job #1 left to another sweep (it holds the point's lock) (2/4 done)")
    assert lines[3].startswith("sweep: job #2 skipped (finished by another sweep) (3/4 done)")
    assert p.ratio() == pytest.approx(2.0)
    assert p.left() == pytest.approx(10.0 * 2.0)  # job 3 only


def test_time_left_is_shared_with_live_sweeps_that_take_this_sweeps_points(tmp_path):
    """Two processes running the same command share the points left; each showed twice the true time left. Another
    live sweep's events file counts once it has taken one of this sweep's points; a dead process's file never."""
    import os
    import subprocess
    import sys

    clock = Clock()
    ev = tmp_path / f"{os.getpid()}-1.events"
    p = Progress(ev, [10.0, 10.0, 10.0, 10.0], parallel=1, clock=clock, load=lambda: 1.0)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    try:
        (tmp_path / f"{other.pid}-2.events").write_text("")
        (tmp_path / f"{dead.stdout.strip()}-3.events").write_text("")  # its process has exited
        write(ev, "start 0 1000", "end 0 1010 ok")
        clock.t = 1010.0
        p.read()
        assert p.sharing() == 1 and p.left() == pytest.approx(30.0)  # no point taken by another sweep yet
        write(ev, "end 1 1010 running_elsewhere")
        p.read()
        assert p.sharing() == 2 and p.left() == pytest.approx(20.0 / 2)  # jobs 2 and 3, shared by two sweeps
    finally:
        other.kill()
        other.wait()
    assert p.sharing() == 1
