"""Sweeps: resume skips exactly the finished runs, --retry-failed re-runs only failed ones, a crashing
configuration is recorded and the rest of the sweep finishes."""

import json
import subprocess

import pytest

from dlm_bench.sweeps.launch import run_sweep, summary_line
from dlm_bench.training.trainer import Trainer
from tests.helpers import cli_command

FAST = ["trainer.max_iters=5", "model.num_inducing=10", "launcher=local"]


def statuses(root):
    out = {}
    for p in root.glob("default/*/run.json"):
        rec = json.loads(p.read_text())
        out[rec["seed"]] = (rec["status"], p.stat().st_mtime_ns)
    return out


def test_resume_skips_exactly_existing_runs(tmp_path):
    counts = run_sweep(FAST + ["seed=0,1", f"results_dir={tmp_path}"])
    assert counts["ok"] == 2 and counts["skipped"] == 0
    before = statuses(tmp_path)
    counts = run_sweep(FAST + ["seed=0,1,2", f"results_dir={tmp_path}"])
    assert counts["skipped"] == 2 and counts["ok"] == 1
    after = statuses(tmp_path)
    assert set(after) == {0, 1, 2}
    assert after[0] == before[0] and after[1] == before[1]  # untouched


def test_failure_is_isolated_and_retry_failed_reruns_only_it(tmp_path, monkeypatch):
    real_fit = Trainer.fit

    def crash_on_seed_1(self, loss_fn, params, X, y, **kwargs):  # kwargs: module= (the checkpoint's)
        if self.seed == 1:
            raise RuntimeError("simulated crash in training")
        return real_fit(self, loss_fn, params, X, y, **kwargs)

    monkeypatch.setattr(Trainer, "fit", crash_on_seed_1)
    counts = run_sweep(FAST + ["seed=0,1,2", f"results_dir={tmp_path}"])
    assert (counts["ok"], counts["failed"]) == (2, 1)
    first = statuses(tmp_path)
    assert {s: st for s, (st, _) in first.items()} == {0: "ok", 1: "failed", 2: "ok"}
    failed_dir = next(p.parent for p in tmp_path.glob("default/*/run.json") if "seed1" in p.parent.name)
    assert "simulated crash" in json.loads((failed_dir / "run.json").read_text())["error"]

    monkeypatch.setattr(Trainer, "fit", real_fit)
    counts = run_sweep(FAST + ["seed=0,1,2", f"results_dir={tmp_path}"])
    assert (counts["skipped"], counts["failed_before"]) == (2, 1)  # failed runs are kept unless asked...
    # ...but a re-run with failed points is no bare success: it says how many and how to retry (issue 54)
    assert summary_line(counts) == ("sweep: 3 jobs, 3 skipped (1 of them failed before: --retry-failed re-runs "
                                    "them), 0 run (0 ok, 0 diverged, 0 failed)")
    counts = run_sweep(FAST + ["seed=0,1,2", f"results_dir={tmp_path}", "resume.retry_failed=true"])
    assert (counts["skipped"], counts["ok"]) == (2, 1)
    second = statuses(tmp_path)
    assert second[1][0] == "ok" and second[0] == first[0] and second[2] == first[2]
    assert summary_line(counts) == "sweep: 3 jobs, 2 skipped, 1 run (1 ok, 0 diverged, 0 failed)"


def test_beta_index_sweep_resolves_the_paper_grid(tmp_path):
    # boston train size 339: indices 0..15 are in the grid (339/2^15 = 0.0103), 16 is not
    counts = run_sweep(FAST + ["objective.beta_index=0,15,16", f"results_dir={tmp_path}"])
    assert counts["ok"] == 2 and counts["outside_grid"] == 1
    betas = sorted(json.loads(p.read_text())["beta"] for p in tmp_path.glob("default/*/run.json"))
    assert betas == [339 / 2**15, 339.0]
    # the point beyond the grid leaves no run directory (it is known only once the data is loaded)
    assert sorted(p.name.split("_")[3] for p in tmp_path.glob("default/boston_*")) == ["betaidx0", "betaidx15"]


@pytest.mark.slow  # 38 s CPU; make test runs a joblib sweep in test_hostile_inputs' ctrl-c test. make test stays under 10 min on 2 cores (make test-slow runs it)
def test_cli_sweep_with_joblib_and_summary(tmp_path, cli_env):
    args = ["sweep", "launcher=joblib", "launcher.n_jobs=2", "seed=0,1", "objective=elbo,dlm",
            "trainer.max_iters=5", "model.num_inducing=10", f"results_dir={tmp_path}"]
    proc = subprocess.run(cli_command() + args, capture_output=True, text=True, env=cli_env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "sweep: 4 jobs, 0 skipped, 4 run (4 ok, 0 diverged, 0 failed)"
    proc = subprocess.run(cli_command() + args, capture_output=True, text=True, env=cli_env, timeout=300)
    assert proc.stdout.strip().splitlines()[-1] == "sweep: 4 jobs, 4 skipped, 0 run (0 ok, 0 diverged, 0 failed)"


def test_cli_sweep_bad_override_is_one_line(tmp_path, cli_env):
    proc = subprocess.run(cli_command() + ["sweep", "objective=elbo,nope", f"results_dir={tmp_path}"],
                          capture_output=True, text=True, env=cli_env, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "nope" in proc.stderr
