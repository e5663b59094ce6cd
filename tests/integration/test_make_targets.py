"""Every Makefile target that runs code, at its smallest size (issue 75). Targets that install, clean or run the test
suite itself (install, clean, test, test-slow, test-slurm, bench-peers' venv) are not run here; bench-peers' script is
in test_scripts.py. The generic reproduce-<experiment> rule runs once, on dlm_demo's smoke variant made tiny.

make runs with VENV= this interpreter's environment and its install stamp taken as up to date (-o), offline: an empty
cache and an empty mirror directory (nothing is downloaded)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make(*args, tmp_path, timeout=600):
    (tmp_path / "mirror").mkdir(exist_ok=True)
    env = {**os.environ, "DLM_BENCH_DATA": str(tmp_path / "cache"), "DLM_BENCH_MIRROR": str(tmp_path / "mirror"),
           "OMP_NUM_THREADS": "1"}
    env.pop("DLM_BENCH_DEBUG", None)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "ARGS"):  # `make test ARGS=...` would hand its ARGS to the target
        env.pop(var, None)
    return subprocess.run(["make", "--no-print-directory", "-o", str(VENV / ".installed"), f"VENV={VENV}", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def test_help_lists_the_targets(tmp_path):
    r = make("help", tmp_path=tmp_path)
    assert r.returncode == 0
    for target in ("run", "test", "bench", "grad-bias", "report", "scoreboard", "experiments"):
        assert f"make {target} " in r.stdout


def test_experiments_lists_one_target_per_config(tmp_path):
    r = make("experiments", tmp_path=tmp_path)
    configs = {p.stem for p in (REPO / "conf/experiment").glob("*.yaml") if not p.stem.endswith("_smoke")}
    listed = {line.split()[1].removeprefix("reproduce-").replace("-", "_") for line in r.stdout.splitlines()}
    assert r.returncode == 0 and listed == configs


def test_reproduce_unknown_experiment_is_one_line_exit_2(tmp_path):
    r = make("reproduce-no-such-figure", tmp_path=tmp_path)
    assert r.returncode == 2
    assert "no experiment config conf/experiment/no_such_figure.yaml" in r.stdout


def test_grad_bias_without_its_data_is_one_line_exit_2(tmp_path):
    """`make grad-bias` without abalone: the script's one line (no traceback) and make's own status line."""
    r = make("grad-bias", f"RESULTS={tmp_path / 'results'}", tmp_path=tmp_path)
    assert r.returncode == 2
    script_lines = [ln for ln in r.stderr.splitlines() if not ln.startswith("make:")]
    assert len(script_lines) == 1 and script_lines[0].startswith("grad_bias.py: error: cannot download abalone")
    assert "Traceback" not in r.stderr


def test_run_then_report(tmp_path):
    """`make run` at a tiny size writes one run; `make report` on its results folder reports it."""
    results = tmp_path / "results"
    r = make("run", f"ARGS=trainer.max_iters=2 model.num_inducing=5 results_dir={results}", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    runs = list(results.rglob("run.json"))
    assert len(runs) == 1
    r = make("report", f"RESULTS={results}", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()


def test_scoreboard_to_a_file(tmp_path):
    out = tmp_path / "README.md"
    r = make("scoreboard", f"ARGS=--out {out}", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert out.read_text().count("\n|") > 10


@pytest.mark.slow
def test_bench_smoke_offline(tmp_path):
    """`make bench ARGS=--smoke` in a clone without data: every bench's title and the whole summary (~50 s CPU)."""
    r = make("bench", "ARGS=--smoke", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    summary = r.stdout.split("== summary", 1)[1]
    for needle in ("Trainer / bare GPyTorch", "uPS-10 / bMC-10", "fixed path / joint path", "batched-grid wall",
                   "Student-t DLM step", "SAVIGP ELBO", "kl-PAC-SGP step", "kl-PAC-GP step", "ordinal site", "1-thread",
                   "`dlm-bench --help` startup"):
        assert needle in summary


def test_reproduce_a_sweep_experiment_estimates_sweeps_and_reports(tmp_path):
    """The generic reproduce-<experiment> rule's path: SMOKE=1 picks dlm_demo_smoke, then --estimate, the sweep and the
    report, with ARGS handed to both sweeps (made tiny here: 2 objectives x 1 beta x 1 seed, 3 iterations)."""
    r = make("reproduce-dlm-demo", "SMOKE=1", f"RESULTS={tmp_path / 'res'}", "LAUNCHER=local",
             "ARGS=objective.beta=1 seed=0 trainer.max_iters=3", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "estimate: 2 new points" in r.stdout + r.stderr
    runs = sorted((tmp_path / "res" / "dlm_demo_smoke").glob("*/run.json"))
    assert len(runs) == 2 and (tmp_path / "res" / "dlm_demo_smoke" / "report" / "index.md").is_file(), r.stdout[-2000:]
