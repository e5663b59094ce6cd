"""`dlm-bench sweep --time-limit`: a point starts only if its estimate fits in the time left; the others are
deferred (nothing written, exit 75) and the same command goes on later."""

import json
import math
import subprocess
import time

import pytest

from dlm_bench.sweeps import cost_estimate
from dlm_bench.sweeps import deadline as sweep_deadline
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.sweeps.deadline import defer_reason, expected_seconds, parse_duration, set_deadline
from dlm_bench.sweeps.launch import run_sweep, summary_line
from tests.helpers import cli_command

FAST = ["trainer.max_iters=5", "model.num_inducing=10", "launcher=local"]


@pytest.mark.parametrize("text, seconds", [("2h30m", 9000), ("90m", 5400), ("1.5h", 5400), ("45s", 45),
                                           ("1d", 86400), ("5400", 5400), (" 2H ", 7200)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "2x", "h", "2h3", "-5", "0", "inf", "2h-3m"])
def test_bad_durations_are_one_line(text):
    with pytest.raises(ValueError, match="--time-limit") as err:
        parse_duration(text)
    assert "\n" not in str(err.value)


def test_defer_reason_compares_the_estimate_with_the_time_left(monkeypatch):
    cfg = compose_config(FAST + ["trainer.checkpoint_every_s=0"])  # no checkpoints: nothing to stop it at
    monkeypatch.setenv(sweep_deadline.DEADLINE_ENV, "1000")
    for need, now, deferred in [(50, 900, False), (150, 900, True), (None, 999, False), (1, 1000, True)]:
        monkeypatch.setattr(sweep_deadline, "expected_seconds", lambda cfg, need=need: need)
        assert (defer_reason(cfg, now=now) is not None) is deferred, (need, now)
    monkeypatch.setattr(sweep_deadline, "expected_seconds", lambda cfg: 150)
    assert defer_reason(cfg, now=900) == "expected to take about 150 s, 100 s of the sweep's --time-limit left"
    monkeypatch.setattr(sweep_deadline, "expected_seconds", lambda cfg: 1500)
    assert defer_reason(cfg, now=100) == "expected to take about 25 min, 15 min of the sweep's --time-limit left"
    monkeypatch.delenv(sweep_deadline.DEADLINE_ENV)
    assert defer_reason(cfg, now=10**9) is None  # no time limit: every point starts


def test_points_that_would_not_finish_are_deferred_and_run_later(tmp_path):
    base = FAST + [f"results_dir={tmp_path}"]
    assert run_sweep(base + ["seed=0"])["ok"] == 1
    wall = json.loads(next(tmp_path.glob("default/*/run.json")).read_text())["train"]["wall_s"]
    # the finished seed estimates the others (its wall time + the run overhead of sweeps/cost_model.yaml): a limit of
    # half that fits neither (a fixed 1 s stopped fitting once the sweep's launch got faster)
    need = expected_seconds(compose_config(base + ["seed=1"]))
    assert need is not None and need >= wall
    with set_deadline(time.time() + need / 2):
        counts = run_sweep(base + ["seed=0,1,2"])
    assert (counts["skipped"], counts["deferred"], counts["ok"]) == (1, 2, 0), (counts, wall)
    assert len(list(tmp_path.glob("default/*/run.json"))) == 1  # nothing written for a deferred point
    assert summary_line(counts).endswith("2 deferred (would not finish within --time-limit: run the same command "
                                         "again to go on)")
    with set_deadline(time.time() + 3600.0):
        counts = run_sweep(base + ["seed=0,1,2"])
    assert (counts["skipped"], counts["deferred"], counts["ok"]) == (1, 0, 2)


def test_a_batched_group_is_estimated_per_member_still_to_train(tmp_path, monkeypatch):
    """boston's 339 training rows: the beta grid has floor(log2(339 / 0.01)) + 1 = 16 members; 3 are done."""
    cfg = compose_config(FAST + ["objective=dlm", "objective.beta_batch=true", "objective.beta_index=0",
                                 f"results_dir={tmp_path}"])
    from dlm_bench.run import run_dir_for
    from dlm_bench.run.batched import member_config

    for k in (1, 4, 9):
        d = run_dir_for(member_config(cfg, k))
        d.mkdir(parents=True)
        (d / "run.json").write_text(json.dumps({"status": "ok"}))
    size = math.floor(math.log2(339 / 0.01)) + 1
    from dlm_bench.sweeps import cost_estimate

    monkeypatch.setattr(cost_estimate, "estimate", lambda points, root, dirs=None: cost_estimate.Estimate(10.0, from_model=1))
    assert sweep_deadline.expected_seconds(cfg) == 10.0 * (size - 3)
    cfg.objective.beta_batch = False  # unbatched: the point alone
    assert sweep_deadline.expected_seconds(cfg) == 10.0


@pytest.mark.slow  # 16 s CPU, a subprocess sweep per case. make test stays under 10 min on 2 cores (make test-slow runs it)
def test_cli_time_limit_exit_code_and_bad_value(tmp_path, cli_env):
    args = ["sweep", *FAST, "seed=0,1", f"results_dir={tmp_path}"]
    proc = subprocess.run(cli_command() + args + ["--time-limit", "0.001s"], capture_output=True, text=True,
                          env=cli_env, timeout=300)
    assert proc.returncode == 75, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1].startswith("sweep: 2 jobs, 0 skipped, 0 run (0 ok, 0 diverged, "
                                                           "0 failed), 2 deferred")
    assert proc.stdout.count("the sweep's --time-limit is reached") == 2  # one progress line per point
    assert not list(tmp_path.glob("default/*/run.json"))
    proc = subprocess.run(cli_command() + args + ["--time-limit", "soon"], capture_output=True, text=True,
                          env=cli_env, timeout=300)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1] == (
        "dlm-bench: error: --time-limit 'soon' is not a duration; use e.g. 2h30m, 90m, 45s or seconds")
    proc = subprocess.run(cli_command() + args + ["launcher=slurm", "--time-limit", "1h"], capture_output=True,
                          text=True, env=cli_env, timeout=300)
    assert proc.returncode == 2 and "--time-limit applies to launcher=local and launcher=joblib" in proc.stderr


def test_a_checkpointing_point_longer_than_the_limit_stops_at_it_and_resumes(tmp_path, monkeypatch):
    """A Trainer point expected to outlast the time left starts anyway, is checkpointed and stopped at the deadline
    (deferred, no run.json), is estimated by its iterations left, and the next sweep resumes it there (that a
    resumed run ends with an uninterrupted one's metrics: tests/integration/test_checkpoint_resume.py)."""
    from dlm_bench.sweeps.plan import plan_estimate, plan_sweep

    from dlm_bench.sweeps import job

    # the point starts however late the sweep gets to it (defer_reason's rule is tested above and below); a deadline
    # passed before its training loop: the alarm's retries (every 0.05 s here) stop it after its first iteration
    monkeypatch.setattr(job, "defer_reason", lambda cfg: None)
    monkeypatch.setattr(sweep_deadline, "RETRY_S", 0.05)
    long = ["trainer.max_iters=1000", "trainer.tol=-1", "model.num_inducing=10", "launcher=local", "seed=0"]
    with set_deadline(time.time() + 1.0):
        counts = run_sweep(long + [f"results_dir={tmp_path / 'cut'}"])
    assert counts["deferred"] == 1 and counts["ok"] == 0, counts
    run_dir = next(d for d in (tmp_path / "cut" / "default").iterdir() if not d.name.startswith("_"))
    assert (run_dir / "checkpoint.pt").is_file() and not (run_dir / "run.json").exists()
    import torch

    done = torch.load(run_dir / "checkpoint.pt", weights_only=False)["result"]["iterations"]
    assert 0 < done < 1000
    plan = plan_sweep(long + [f"results_dir={tmp_path / 'cut'}"])
    est, seconds = plan_estimate(plan)
    assert est.resumed == 1 and "1 resuming from a checkpoint" in est.line()
    fresh = plan_estimate(plan_sweep(long + [f"results_dir={tmp_path / 'whole'}"]))[0]
    overhead = cost_estimate.RUN_OVERHEAD_S
    assert est.seconds - overhead == pytest.approx((fresh.seconds - overhead) * (1 - done / 1000), rel=1e-9)
    assert run_sweep(long + [f"results_dir={tmp_path / 'cut'}"])["ok"] == 1
    train = json.loads((run_dir / "run.json").read_text())["train"]
    assert train["resumed_at"] == [done] and train["iterations"] == 1000
    assert not (run_dir / "checkpoint.pt").exists()


def test_an_own_loop_point_is_still_deferred_when_it_would_not_finish(monkeypatch):
    cfg = compose_config(["experiment=fp_fig2_smoke"])
    monkeypatch.setenv(sweep_deadline.DEADLINE_ENV, "1000")
    monkeypatch.setattr(sweep_deadline, "expected_seconds", lambda cfg: 5000)
    assert not sweep_deadline.checkpoints(cfg)
    assert defer_reason(cfg, now=0) is not None
    trainer_cfg = compose_config(FAST)
    assert sweep_deadline.checkpoints(trainer_cfg) and defer_reason(trainer_cfg, now=0) is None
    assert defer_reason(trainer_cfg, now=1000 - sweep_deadline.MIN_SLICE_S / 2) is not None


def test_an_sggpm_point_stops_at_the_limit_keeping_its_finished_folds(shared_data, tmp_path, monkeypatch):
    """SGGPM checkpoints per fold (sggpm/plugin.py): the deadline, reached in fold 3 of 4, stops the point at once
    (deferred, no run.json) with folds 1-2 saved; the estimate counts the 2 folds left; the next sweep fits folds 3
    and 4 only and ends with an uninterrupted run's metrics. Before, an SGGPM point ran on past the limit."""
    import signal

    from dlm_bench.run import execute
    from dlm_bench.sggpm import plugin
    from dlm_bench.sweeps import job
    from dlm_bench.sweeps.plan import plan_estimate, plan_sweep

    monkeypatch.setenv("DLM_BENCH_MIRROR", str(shared_data))
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setattr(job, "defer_reason", lambda cfg: None)  # it starts (the rule: test_an_own_loop_point_...)
    args = ["dataset=ucsdpeds1l", "model=sggpm", "sggpm.method=fp_sparse", "sggpm.size_index=0", "sggpm.max_folds=4",
            "trainer.progress=off", "launcher=local"]
    reference, _ = execute(compose_config(args + [f"results_dir={tmp_path / 'ref'}"]))
    real_fit, calls = plugin.fit_method, []

    def deadline_in_fold_3(*a, **kw):
        calls.append(len(calls) + 1)
        if len(calls) == 3 and not resumed:
            signal.setitimer(signal.ITIMER_REAL, 0.01)  # the sweep's deadline alarm (stop_at_deadline) goes off now
            time.sleep(5)
        return real_fit(*a, **kw)

    monkeypatch.setattr(plugin, "fit_method", deadline_in_fold_3)
    cut = args + [f"results_dir={tmp_path / 'cut'}"]
    resumed = False
    with set_deadline(time.time() + 3600):
        counts = run_sweep(cut)
    assert counts["deferred"] == 1 and counts["ok"] == 0 and calls == [1, 2, 3], (counts, calls)
    run_dir = next((tmp_path / "cut").glob("default/ucsdpeds1l_sggpm_fp_sparse_*"))
    assert (run_dir / "checkpoint.pt").is_file() and not (run_dir / "run.json").exists()
    est = plan_estimate(plan_sweep(cut))[0]
    assert est.resumed == 1 and cost_estimate.checkpoint_progress(run_dir) == 0.5
    resumed, calls[:] = True, []
    assert run_sweep(cut)["ok"] == 1 and calls == [1, 2]  # folds 3 and 4
    record = json.loads((run_dir / "run.json").read_text())
    assert record["metrics"] == reference.metrics | {"cpu_s": record["metrics"]["cpu_s"]}
    assert (run_dir / "curve.csv").read_text().count("\n") == 1 + 4  # a header and the 4 folds


def est_config(overrides):
    """A point's resolved config as the estimate reads it (run.json's `config`)."""
    from dlm_bench.run import config_dict

    return config_dict(compose_config(overrides))
