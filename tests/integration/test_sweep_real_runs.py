"""Sweeps that really run (issue 10, sec. 4 and 5): a second sweep skips points running elsewhere, dry runs
say what will run and write nothing, SIGTERM to a joblib sweep leaves no worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from dlm_bench.cli import main
from dlm_bench.run import run_dir_for
from dlm_bench.run.signals import descendants as _descendants
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.sweeps.launch import run_sweep
from dlm_bench.sweeps.plan import plan_sweep
from dlm_bench.util.locks import LOCK_NAME
from tests.helpers import cli_command

FAST = ["trainer.max_iters=5", "model.num_inducing=10", "launcher=local"]


def test_second_sweep_skips_points_running_elsewhere_and_dry_run_says_so(tmp_path):
    ov = FAST + [f"results_dir={tmp_path}"]
    busy = run_dir_for(compose_config(ov + ["seed=1"]))
    busy.mkdir(parents=True)
    # the other sweep: a live process on this host holding seed 1
    (busy / LOCK_NAME).write_text(json.dumps({"host": os.uname().nodename, "pid": os.getppid()}))
    plan = plan_sweep(ov + ["seed=0,1"])
    assert [(p.shown, p.state) for p in plan] == [("seed=0", "new"), ("seed=1", "running_elsewhere")]
    counts = run_sweep(ov + ["seed=0,1"])
    assert counts["ok"] == 1 and counts["running_elsewhere"] == 1
    assert not (busy / "run.json").exists() and (busy / LOCK_NAME).exists()
    done = run_dir_for(compose_config(ov + ["seed=0"]))
    assert json.loads((done / "run.json").read_text())["status"] == "ok" and not (done / LOCK_NAME).exists()


def test_dry_run_lists_grid_names_and_states_without_running(tmp_path, capsys):
    from dlm_bench.config.beta_grid import apply_beta_grid_flag

    ov = FAST + [f"results_dir={tmp_path}", "method=elbo"]  # elbo has no beta: only beta_index 0 applies
    run_sweep(ov + ["seed=0", "objective.beta_index=0"])
    cfg = compose_config(ov + ["seed=2", "objective.beta_index=0"])
    apply_beta_grid_flag(cfg.objective)
    failed = run_dir_for(cfg)
    failed.mkdir(parents=True)
    (failed / "run.json").write_text(json.dumps({"status": "failed"}))
    before = sorted(tmp_path.rglob("*"))
    assert main(["sweep", "--dry-run", "seed=0,1,2", "objective.beta_index=0,30"] + ov) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "dry run: 6 grid points, 1 new, 1 done, 1 failed, 3 not applicable; nothing was run"
    assert out[-1].startswith("estimate: 1 new point, about ")
    rows = {tuple(line.split()[1:3]): line for line in out[:-2]}
    assert "done" in rows[("seed=0", "objective.beta_index=0")]
    assert "new" in rows[("seed=1", "objective.beta_index=0")]
    assert "failed (skipped" in rows[("seed=2", "objective.beta_index=0")] and failed.name in rows[("seed=2", "objective.beta_index=0")]
    assert all("not applicable" in rows[(f"seed={s}", "objective.beta_index=30")] for s in range(3))
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, not even Hydra's sweep folder


def test_large_dry_run_reports_progress_on_stderr(tmp_path, capsys, monkeypatch):
    import dlm_bench.sweeps.plan as sweep

    monkeypatch.setattr(sweep, "PROGRESS_FROM", 10)  # a paper-size grid, scaled down
    ov = FAST + [f"results_dir={tmp_path}", "method=elbo", "seed=range(0,20)"]
    assert main(["sweep", "--dry-run"] + ov) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"sweep: checked {i} of 20 grid points" for i in range(2, 20, 2)]
    assert captured.out.splitlines()[-2] == "dry run: 20 grid points, 20 new; nothing was run"


def test_dry_run_names_match_what_the_sweep_writes(tmp_path):
    ov = FAST + [f"results_dir={tmp_path}", "seed=0"]
    names = sorted(p.name for p in plan_sweep(ov))
    run_sweep(ov)
    assert names == sorted(p.parent.name for p in tmp_path.glob("default/*/run.json"))
    assert all(p.state == "done" for p in plan_sweep(ov))


def test_fast_plan_equals_hydra_composing_every_point(tmp_path):
    """plan_sweep composes once per set of group choices and applies value overrides itself: the same run names
    and states as composing each point with Hydra, over group, value and experiment sweeps."""
    ov = [f"results_dir={tmp_path}", "experiment=dlm_classification_smoke", "seed=0",
          "method=dlm,beta_elbo", "trainer.lr=0.01,0.02", "objective.beta_index=0,3"]
    fast, slow = plan_sweep(ov), plan_sweep(ov, compose_each=True)
    assert len(fast) >= 8 and fast == slow


def test_every_grid_point_is_validated_before_anything_runs(tmp_path, capsys):
    ov = FAST + [f"results_dir={tmp_path}"]
    assert main(["sweep", "objective=dlm", "objective.beta=1,-1,0.5"] + ov) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["dlm-bench: error: grid point 1 (objective.beta=-1) is invalid: objective.beta must be a finite "
                   "number > 0, got -1.0; nothing was run"]
    assert not list(tmp_path.rglob("run.json"))  # the good points did not train either
    assert main(["sweep", "--dry-run", "objective.beta=1,nan"] + ov) == 2
    out = capsys.readouterr().out.splitlines()
    assert "INVALID: objective.beta must be a finite number > 0, got nan" in out[1]
    assert out[-2] == "dry run: 2 grid points, 1 new, 1 invalid; nothing was run"


@pytest.mark.slow
@pytest.mark.parametrize("grid", [["seed=0,1"],
                                  # two beta groups trained at once; the worker freed first must not start a third
                                  ["method=dlm,beta_elbo", "objective.beta_index=0,2,5", "objective.beta_batch=true",
                                   "model.num_inducing=10", "dataset=boston"]])
def test_sigterm_to_a_joblib_sweep_leaves_no_worker(tmp_path, cli_env, grid):
    cmd = cli_command() + ["sweep", "launcher=joblib", "launcher.n_jobs=2", *grid, "trainer.max_iters=100000",
                           "trainer.tol=0", f"results_dir={tmp_path}"]
    proc = subprocess.Popen(cmd, env={**cli_env, "OMP_NUM_THREADS": "1"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while len(list(tmp_path.glob(f"default/*/{LOCK_NAME}"))) < 2 and time.time() < deadline:
        time.sleep(0.2)
    workers = _descendants(proc.pid)
    assert len(workers) >= 2
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 143
    time.sleep(1)
    alive = [p for p in workers if Path(f"/proc/{p}").exists() and Path(f"/proc/{p}/stat").read_text().split(")")[1].split()[0] != "Z"]
    assert alive == [] and list(tmp_path.rglob(LOCK_NAME)) == []
    run_dirs = [p for p in tmp_path.glob("default/*") if p.is_dir() and p.name[0] not in "._"]
    assert [p for p in run_dirs if not any(p.iterdir())] == []  # no empty run dir


def _live(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
def test_sigkill_to_a_joblib_sweep_leaves_no_worker(tmp_path, cli_env):
    """A SIGKILLed sweep cannot stop its workers: each worker's watchdog (sweeps/watchdog.py) sees its parent gone,
    SIGTERMs itself (the job unwinds and releases its lock) and exits."""
    from dlm_bench.util.locks import holder

    cmd = cli_command() + ["sweep", "launcher=joblib", "launcher.n_jobs=2", "seed=0,1", "trainer.max_iters=100000",
                           "trainer.tol=0", "model.num_inducing=10", f"results_dir={tmp_path}"]
    proc = subprocess.Popen(cmd, env={**cli_env, "OMP_NUM_THREADS": "1"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while len(list(tmp_path.glob(f"default/*/{LOCK_NAME}"))) < 2 and time.time() < deadline:
        time.sleep(0.2)
    workers = _descendants(proc.pid)
    assert len(list(tmp_path.glob(f"default/*/{LOCK_NAME}"))) == 2 and len(workers) >= 2
    proc.kill()
    assert proc.wait(timeout=10) == -signal.SIGKILL
    deadline = time.time() + 10
    while any(_live(p) for p in workers) and time.time() < deadline:
        time.sleep(0.2)
    assert [p for p in workers if _live(p)] == []
    # a lock left behind (os._exit before the unwinding finished) is held by no live process
    assert [lock for lock in tmp_path.rglob(LOCK_NAME) if holder(lock.parent) is not None] == []
