"""objective.beta_batch (dlm_bench/run/batched.py): a beta group trained in one batched model gives the unbatched
runs' results (same seed, same init, same Adam updates: equal to rounding) under the unbatched run names."""

import csv
import json

import pytest

from dlm_bench.config.beta_grid import beta_grid
from dlm_bench.errors import ConfigError
from dlm_bench.run import execute, run_name
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.sweeps.launch import run_sweep
from tests.helpers import assert_batched_member_equals

TINY = ["model.num_inducing=10", "trainer.max_iters=40", "dtype=float64", "device=cpu", "launcher=local",
        "trainer.progress=off", "dataset=boston"]
GRID = ["method=dlm,dlm_fixed,beta_elbo", "objective.beta_index=0,5"]  # 3 groups of 2 members


def runs(root):
    return {p.parent.name: json.loads(p.read_text()) for p in root.glob("default/*/run.json")}


def test_batched_sweep_equals_unbatched_runs(tmp_path):
    plain = run_sweep(TINY + GRID + [f"results_dir={tmp_path / 'plain'}"])
    assert plain["ok"] == 6
    batched = run_sweep(TINY + GRID + [f"results_dir={tmp_path / 'batched'}", "objective.beta_batch=true"])
    assert (batched["ok"], batched["skipped"]) == (3, 3)  # the first job of each method's group trains both
    a, b = runs(tmp_path / "plain"), runs(tmp_path / "batched")
    assert set(a) == set(b) and len(a) == 6  # the same run names
    for name, ra in a.items():
        rb = b[name]
        assert rb["train"]["batched"] == 2 and "batched" not in ra["train"]
        assert set(ra) == set(rb) and set(ra["train"]) | {"batched", "batch_wall_s"} == set(rb["train"])
        assert_batched_member_equals(ra, rb, name)
        ca = list(csv.DictReader((tmp_path / "plain" / "default" / name / "curve.csv").open()))
        cb = list(csv.DictReader((tmp_path / "batched" / "default" / name / "curve.csv").open()))
        assert len(ca) == len(cb) and ca[0].keys() == cb[0].keys()
    # a later sweep, batched or not, finds every run done
    again = run_sweep(TINY + GRID + [f"results_dir={tmp_path / 'batched'}"])
    assert again["skipped"] == 6
    # each group's trainer recorded the grid at its training size
    n = next(iter(b.values()))["train_size"]
    grids = [json.loads(p.read_text()) for p in (tmp_path / "batched" / "default").glob(".beta_batch/*/beta_grid.json")]
    assert len(grids) == 3 and all(g == {"n_train": n, "points": len(beta_grid(n, 0.01))} for g in grids)


def test_run_name_ignores_beta_batch():
    cfg = compose_config(["method=dlm", "objective.beta_index=3"])
    cfg_b = compose_config(["method=dlm", "objective.beta_index=3", "objective.beta_batch=true"])
    assert run_name(cfg) == run_name(cfg_b)


def test_minibatch_points_run_unbatched_with_the_plain_runs_results(tmp_path):
    """dlm_supp_beta_cadata sets beta_batch for n = 691 (full batch) and n = 13829 (minibatches of 6000): a point
    whose training size exceeds trainer.batch_size runs as the ordinary run (same seed: the same numbers), not as
    a ConfigError after loading the data."""
    mini = TINY[:1] + ["trainer.max_iters=20"] + TINY[2:] + ["trainer.batch_size=64", "method=dlm", "objective.beta_index=0,2"]
    plain = run_sweep(mini + [f"results_dir={tmp_path / 'plain'}"])
    batched = run_sweep(mini + [f"results_dir={tmp_path / 'batched'}", "objective.beta_batch=true"])
    assert plain["ok"] == 2 and batched["ok"] == 2
    a, b = runs(tmp_path / "plain"), runs(tmp_path / "batched")
    assert set(a) == set(b) and len(a) == 2
    for name, ra in a.items():
        assert "batched" not in b[name]["train"]
        for k, v in ra["metrics"].items():
            assert b[name]["metrics"][k] == pytest.approx(v, rel=1e-10, abs=1e-12), (name, k)


@pytest.mark.parametrize("extra", [["estimator=bmc", "estimator.num_samples=2"],
                                   ["trainer.optimizer=lbfgs"], ["model.likelihood=student_t"],
                                   ["estimator=smooth_bmc", "estimator.num_samples=2"]])
def test_unsupported_settings_raise_one_line_config_error(tmp_path, extra):
    cfg = compose_config(["method=dlm", "objective.beta_index=1", "objective.beta_batch=true",
                          f"results_dir={tmp_path}", *extra])
    with pytest.raises(ConfigError, match="objective.beta_batch=true supports") as err:
        execute(cfg)
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------------------------------------- parallel launchers


def _lock_as(run_dir, pid, sweep=None):
    """Write run_dir's lock as if process `pid` (alive, on this host; a job of sweep `sweep`) held it."""
    import socket

    run_dir.mkdir(parents=True, exist_ok=True)
    info = {"host": socket.gethostname(), "pid": pid, **({"sweep": sweep} if sweep else {})}
    (run_dir / ".lock").write_text(json.dumps(info))


@pytest.fixture
def other_processes():
    """Two live processes that stand for other workers holding locks."""
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"]) for _ in range(2)]
    yield [p.pid for p in procs]
    for p in procs:
        p.kill()
        p.wait()


@pytest.fixture(autouse=True)
def keep_sigterm_handler():
    """sweep_group_job, called directly here, installs the sweep's SIGTERM handler (a sweep restores it)."""
    import signal

    old = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, old)


def _member(tmp_path, k=2):
    from dlm_bench.run.batched import group_lock_dir
    from dlm_bench.sweeps.plan import point_state

    cfg = compose_config(TINY + ["method=dlm", f"objective.beta_index={k}", "objective.beta_batch=true",
                                 f"results_dir={tmp_path}"])
    state, run_dir = point_state(cfg)
    assert state == "new"
    return cfg, run_dir, group_lock_dir(cfg)


def test_a_job_whose_point_the_group_holder_trains_returns_without_waiting(tmp_path, other_processes, monkeypatch):
    """joblib / SLURM: the group's other jobs free their worker at once instead of waiting out the group
    (before, every such job slept on the group lock, so two joblib workers trained one group at a time)."""
    from dlm_bench.run import batched
    from dlm_bench.sweeps import job as sweep

    cfg, run_dir, group_dir = _member(tmp_path)
    _lock_as(group_dir, other_processes[0])
    _lock_as(run_dir, other_processes[0])  # the group's holder has taken this member's lock: it trains it

    def no_wait(_):
        raise AssertionError("waited for the group lock")

    monkeypatch.setattr(batched.time, "sleep", no_wait)
    assert sweep.sweep_group_job(cfg, run_dir) == "skipped"
    assert not (run_dir / "run.json").exists()


@pytest.mark.parametrize("holders_sweep,outcome", [("this-sweep", "skipped"), ("other-sweep", "running_elsewhere")])
def test_a_point_another_sweep_trains_is_left_to_it_not_counted_as_written_by_its_group(
        tmp_path, other_processes, monkeypatch, holders_sweep, outcome):
    """Two sweeps on one results directory: a point whose group (for a minibatch point, the point alone) another
    sweep holds returns "running_elsewhere", which the summary and the progress display say; a holder of this
    sweep (another joblib worker training the group) gives "skipped" as before. Before, both were "skipped", and
    the display counted the other sweep's work as this sweep's group time (time left about halved)."""
    from dlm_bench.run import batched
    from dlm_bench.sweeps import job as sweep
    from dlm_bench.util.locks import SWEEP_ID_ENV

    monkeypatch.setenv(SWEEP_ID_ENV, "this-sweep")
    cfg, run_dir, group_dir = _member(tmp_path)
    _lock_as(group_dir, other_processes[0], holders_sweep)
    _lock_as(run_dir, other_processes[0], holders_sweep)
    monkeypatch.setattr(batched.time, "sleep", lambda _: pytest.fail("waited for the group lock"))
    events = []
    monkeypatch.setattr(sweep, "announce", lambda event, out="": events.append((event, out)))
    assert sweep.sweep_job(cfg) == outcome
    assert events == [("end", outcome)] and not (run_dir / "run.json").exists()


def test_a_job_beyond_the_grid_its_group_holder_recorded_returns_at_once(tmp_path, other_processes, monkeypatch):
    """Two sweeps (or joblib workers) over one beta_index range wider than the grid at the training size: a job whose
    index lies beyond the grid the holder recorded returns "outside_grid" at once. Before (2026-12-08), it waited for
    the whole group (seed 4 of dlm_supp_pol at n = 3000: beta_index 19 idled the second sweep for the joint DLM group's
    hour); a holder that has not recorded its grid yet, or whose grid holds the index, is still waited for."""
    from dlm_bench.run import batched
    from dlm_bench.sweeps import job as sweep

    cfg, run_dir, group_dir = _member(tmp_path, k=5)
    _lock_as(group_dir, other_processes[0])
    polls = []

    def record_grid(_):  # the holder loads its data during the first poll and records a grid of 5 points
        polls.append(1)
        (group_dir / batched.GRID_FILE).write_text(json.dumps({"n_train": 20, "points": 5}))

    monkeypatch.setattr(batched.time, "sleep", record_grid)
    assert sweep.sweep_group_job(cfg, run_dir) == "outside_grid" and polls == [1]
    assert not (run_dir / "run.json").exists()

    cfg4, run_dir4, _ = _member(tmp_path, k=4)  # inside that grid: waits for the holder as before
    monkeypatch.setattr(batched.time, "sleep", lambda _: (group_dir / ".lock").unlink())
    run_dir4.mkdir(parents=True, exist_ok=True)
    (run_dir4 / "run.json").write_text(json.dumps({"status": "ok"}))
    assert sweep.sweep_group_job(cfg4, run_dir4) == "skipped"


def test_a_job_waits_for_a_group_holder_that_does_not_train_its_point(tmp_path, other_processes, monkeypatch):
    """Waiting is kept where it is needed: the holder (e.g. a sweep over fewer betas) left this member out, or
    another sweep, not the holder, has the member's lock."""
    from dlm_bench.run import batched
    from dlm_bench.sweeps import job as sweep
    from dlm_bench.util.locks import holder

    cfg, run_dir, group_dir = _member(tmp_path)
    _lock_as(group_dir, other_processes[0])
    waits = []

    def holder_done(_):  # the holder finishes after one poll: it wrote this member's run.json
        waits.append(1)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "run.json").write_text(json.dumps({"status": "ok"}))
        (group_dir / ".lock").unlink()

    monkeypatch.setattr(batched.time, "sleep", holder_done)
    assert sweep.sweep_group_job(cfg, run_dir) == "skipped" and waits == [1]
    assert holder(group_dir) is None

    cfg, run_dir, group_dir = _member(tmp_path / "b")
    _lock_as(group_dir, other_processes[0])
    _lock_as(run_dir, other_processes[1])  # another sweep has this member, not the group's holder
    waits.clear()

    def holder_gone(_):
        waits.append(1)
        (group_dir / ".lock").unlink()

    monkeypatch.setattr(batched.time, "sleep", holder_gone)
    assert sweep.sweep_group_job(cfg, run_dir) == "running_elsewhere" and waits == [1]
    assert not (run_dir / "run.json").exists()


@pytest.mark.slow  # 57-88 s of CPU (make test-slow); kept out of make test's 10 minutes
def test_batched_sweep_with_joblib_equals_the_one_at_a_time_sweep(tmp_path, cli_env):
    import subprocess

    from tests.helpers import cli_command

    grid = ["method=dlm,beta_elbo", "objective.beta_index=0,2,5", "objective.beta_batch=true"]
    local = run_sweep(TINY + grid + [f"results_dir={tmp_path / 'local'}"])
    assert (local["ok"], local["skipped"]) == (2, 4)
    # the CLI in a subprocess: no loky executor is left in the test process
    args = ["sweep", *TINY, *grid, f"results_dir={tmp_path / 'joblib'}", "launcher=joblib", "launcher.n_jobs=2"]
    proc = subprocess.run(cli_command() + args, capture_output=True, text=True, env=cli_env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "sweep: 6 jobs, 4 skipped, 2 run (2 ok, 0 diverged, 0 failed)"
    a, b = runs(tmp_path / "local"), runs(tmp_path / "joblib")
    assert set(a) == set(b) and len(a) == 6
    for name in a:
        assert b[name]["train"]["batched"] == 3
        assert_batched_member_equals(a[name], b[name], name)


def test_batched_group_heartbeat_lines(tmp_path, capsys, monkeypatch):
    """trainer.progress=lines (a sweep's default) in a batched group: the line counts the members still training.
    With a 1 ns interval every iteration prints one: as many lines as the longest member's iterations."""
    monkeypatch.setenv("DLM_BENCH_HEARTBEAT_S", "1e-9")
    tiny = [o for o in TINY if not o.startswith("trainer.progress")] + ["trainer.max_iters=30"]
    out = run_sweep(tiny + ["method=dlm", "objective.beta_index=0,2,5", "trainer.progress=lines",
                            "objective.beta_batch=true", f"results_dir={tmp_path}"])
    assert out["ok"] == 1
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "still training" in ln]
    assert len(lines) == max(r["train"]["iterations"] for r in runs(tmp_path).values()) == 30
    assert lines[0].startswith("[dlm-bench] #0 still training (3 of 3 betas, batched): iteration 1/30, ")


# ------------------------------------------------------------------------------ a member or the batch fails


def _failing_batch_loss(monkeypatch, at_call: int, how: str):
    """BatchedBundle.loss of the 3-member batch, on its `at_call`-th call: member 0's loss is NaN (how="nan") or
    the whole step raises a Cholesky error (how="raise")."""
    from linear_operator.utils.errors import NotPSDError

    from dlm_bench.models.batched_svgp import BatchedBundle

    original, calls = BatchedBundle.loss, {"n": 0}

    def loss(self, X, y):
        out = original(self, X, y)
        if self.B == 3:
            calls["n"] += 1
            if calls["n"] == at_call and how == "raise":
                raise NotPSDError("injected: K_ZZ is not positive definite")
            if calls["n"] == at_call:
                out = out + out.new_tensor([float("nan"), 0.0, 0.0])
        return out

    monkeypatch.setattr(BatchedBundle, "loss", loss)


def test_a_diverged_member_stops_and_the_others_train_on_as_unbatched(tmp_path, monkeypatch):
    """Member 0's loss is NaN at iteration 3: it is written as diverged at iteration 3; the other two go on in a
    batch of 2 (the shrink path) and end as their unbatched runs do."""
    grid = ["method=dlm", "objective.beta_index=0,2,5"]
    plain = run_sweep(TINY + grid + [f"results_dir={tmp_path / 'plain'}"])
    _failing_batch_loss(monkeypatch, 3, "nan")
    batched = run_sweep(TINY + grid + [f"results_dir={tmp_path / 'batched'}", "objective.beta_batch=true"])
    assert plain["ok"] == 3 and (batched["ok"], batched["diverged"], batched["skipped"]) == (0, 1, 2)
    a, b = runs(tmp_path / "plain"), runs(tmp_path / "batched")
    first = next(name for name in a if "betaidx0_" in name)
    assert b[first]["status"] == "diverged"
    assert b[first]["error"] == "non-finite training loss (nan) at iteration 3"
    for name in set(a) - {first}:
        assert_batched_member_equals(a[name], b[name], name)


@pytest.mark.slow  # 16 s CPU: make test keeps the diverged-member fault path; make test-slow runs this one
def test_a_step_that_fails_for_the_whole_batch_reruns_the_members_unbatched(tmp_path, monkeypatch):
    grid = ["method=dlm", "objective.beta_index=0,2,5"]
    plain = run_sweep(TINY + grid + [f"results_dir={tmp_path / 'plain'}"])
    _failing_batch_loss(monkeypatch, 4, "raise")
    batched = run_sweep(TINY + grid + [f"results_dir={tmp_path / 'batched'}", "objective.beta_batch=true"])
    assert plain["ok"] == 3 and batched["ok"] + batched["skipped"] == 3
    a, b = runs(tmp_path / "plain"), runs(tmp_path / "batched")
    assert set(a) == set(b)
    for name, ra in a.items():
        assert "batched" not in b[name]["train"]  # trained as the ordinary run
        for k, v in ra["metrics"].items():
            assert b[name]["metrics"][k] == pytest.approx(v, rel=1e-10, abs=1e-12), (name, k)
