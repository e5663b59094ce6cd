"""`dlm-bench sweep --time-limit`: a point starts only if its estimate fits in the time left; the others are
deferred (nothing written, exit 75) and the same command goes on later."""

import json
import math
import subprocess
import time

import pytest

from dlm_bench.cli import compose_config
from dlm_bench.sweeps import deadline as sweep_deadline
from dlm_bench.sweeps.deadline import defer_reason, parse_duration, set_deadline
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
    cfg = compose_config(FAST)
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
    # the finished seed estimates the others: its wall time + 1 s of overhead does not fit in 1 s
    with set_deadline(time.time() + 1.0):
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

    monkeypatch.setattr(cost_estimate, "estimate", lambda points, root: cost_estimate.Estimate(10.0, from_model=1))
    assert sweep_deadline.expected_seconds(cfg) == 10.0 * (size - 3)
    cfg.objective.beta_batch = False  # unbatched: the point alone
    assert sweep_deadline.expected_seconds(cfg) == 10.0


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
