"""model=sggpm through the CLI: the published fold-10 objective from run.json's curve, run names, config errors."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest

from dlm_bench.registry.validation import validate_run as check_method
from dlm_bench.run import run_name
from dlm_bench.sweeps.compose import compose_config
from tests.helpers import cli_command


def test_default_run_name_unchanged_by_sggpm_section():
    assert run_name(compose_config([])) == "boston_svgp_elbo_beta1_seed0_fdd973a4"
    assert "_sggpm_fp_sparse_" in run_name(compose_config(["model=sggpm", "dataset=ucsdpeds1l"]))
    check_method(compose_config(["model=sggpm"]))


@pytest.mark.slow
def test_cli_published_splits_fold10(shared_data, tmp_path, cli_env):
    env = dict(cli_env, DLM_BENCH_MIRROR=str(shared_data), DLM_BENCH_DATA=str(tmp_path / "cache"), OMP_NUM_THREADS="1")
    out = subprocess.run(cli_command() + ["run", "dataset=ucsdpeds1l", "model=sggpm", "sggpm.method=fp_sparse",
                                          "sggpm.size_index=4", "sggpm.published_splits=true",
                                          f"results_dir={tmp_path}"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    run_dir = next(tmp_path.glob("default/ucsdpeds1l_sggpm_fp_sparse_*"))
    rec = json.loads((run_dir / "run.json").read_text())
    curve = pd.read_csv(run_dir / "curve.csv")
    assert curve["objective"].iloc[9] == pytest.approx(8208.705779651731, rel=1e-8)
    assert rec["train"]["upstream_mean_double_log"] is True
    assert rec["metrics"]["set_size"] == 167 and rec["metrics"]["folds"] == 10
    assert 0.06 < rec["metrics"]["mfe"] < 0.15  # the paper's Fig. 2 ucsdpeds1l range


def test_dual_on_ordinal_is_a_one_line_error(shared_data, tmp_path, cli_env):
    env = dict(cli_env, DLM_BENCH_MIRROR=str(shared_data), DLM_BENCH_DATA=str(tmp_path / "cache"), OMP_NUM_THREADS="1")
    out = subprocess.run(cli_command() + ["run", "dataset=stock", "model=sggpm", "sggpm.method=dual_sparse",
                                          f"results_dir={tmp_path}"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "no ordinal version" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_progress_lines_one_per_fold(shared_data, tmp_path, capsys, monkeypatch):
    """trainer.progress=lines (a sweep's default): SGGPM's own loop prints a still-training line per fold at a 1 ns
    interval, counting the folds that run.json's curve then holds."""
    from dlm_bench.run import execute

    monkeypatch.setenv("DLM_BENCH_MIRROR", str(shared_data))
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("DLM_BENCH_HEARTBEAT_S", "1e-9")
    cfg = compose_config(["dataset=ucsdpeds1l", "model=sggpm", "sggpm.method=fp_sparse", "sggpm.size_index=0",
                          "sggpm.max_folds=3", "trainer.progress=lines", f"results_dir={tmp_path}"])
    record, run_dir = execute(cfg)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "still training" in ln]
    assert record.status == "ok" and record.metrics["folds"] == 3
    M = record.metrics["set_size"]
    assert len(lines) == 3 and lines == [f"[dlm-bench] still training (SGGPM fp_sparse, M = {M}): fold {k}/3, " + ln.split(", ")[-1]
                     for k, ln in zip((1, 2, 3), lines)]


def test_a_killed_run_resumes_at_its_first_unfinished_fold(shared_data, tmp_path, monkeypatch):
    """Own-loop SGGPM runs checkpoint their finished folds: a run interrupted in fold 3 (KeyboardInterrupt, as
    SIGTERM becomes) writes no run.json and keeps checkpoint.pt; the same point run again fits only folds 3-4 and
    ends with the curve and metrics of an uninterrupted run in another directory."""
    from dlm_bench.run import execute
    from dlm_bench.sggpm import plugin

    monkeypatch.setenv("DLM_BENCH_MIRROR", str(shared_data))
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    args = ["dataset=ucsdpeds1l", "model=sggpm", "sggpm.method=fp_sparse", "sggpm.size_index=0", "sggpm.max_folds=4",
            "trainer.progress=off"]
    reference, ref_dir = execute(compose_config(args + [f"results_dir={tmp_path / 'ref'}"]))
    real_fit, calls = plugin.fit_method, []

    def fit_then_die(*a, **kw):
        calls.append(len(calls) + 1)
        if len(calls) == 3 and not resumed:
            raise KeyboardInterrupt
        return real_fit(*a, **kw)

    monkeypatch.setattr(plugin, "fit_method", fit_then_die)
    cfg = compose_config(args + [f"results_dir={tmp_path / 'cut'}"])
    resumed = False
    with pytest.raises(KeyboardInterrupt):
        execute(cfg)
    run_dir = next((tmp_path / "cut").glob("default/ucsdpeds1l_sggpm_fp_sparse_*"))
    assert (run_dir / "checkpoint.pt").is_file() and not (run_dir / "run.json").exists()
    resumed, calls[:] = True, []
    record, run_dir = execute(cfg)
    assert calls == [1, 2]  # folds 3 and 4 only
    assert record.status == "ok" and not (run_dir / "checkpoint.pt").exists()
    assert record.metrics == reference.metrics | {"cpu_s": record.metrics["cpu_s"]}
    cols = ["fold", "objective", "neg_vlb", "outer", "mfe", "mnlpd"]
    pd.testing.assert_frame_equal(pd.read_csv(run_dir / "curve.csv")[cols], pd.read_csv(ref_dir / "curve.csv")[cols])


@pytest.mark.parametrize("method", ["fp_sparse", "fp_sod"])
def test_a_run_stopped_after_its_last_fold_was_saved_resumes_without_refitting(method, shared_data, tmp_path,
                                                                                monkeypatch):
    """A stop between the last fold's checkpoint and run.json (the sweep's --time-limit stops SGGPM at once) leaves a
    checkpoint with every fold: the rerun fits nothing and writes the uninterrupted run's metrics and
    hyperparameters (before, the hyperparameters came only from a fit in this process: the rerun failed)."""
    from dlm_bench.run import execute
    from dlm_bench.sggpm import plugin

    monkeypatch.setenv("DLM_BENCH_MIRROR", str(shared_data))
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    args = ["dataset=ucsdpeds1l", "model=sggpm", f"sggpm.method={method}", "sggpm.size_index=0", "sggpm.max_folds=3",
            "trainer.progress=off"]
    reference, _ = execute(compose_config(args + [f"results_dir={tmp_path / 'ref'}"]))
    real_fit, real_summarise, calls = plugin.fit_method, plugin.summarise, []

    def stop_before_summary(*a, **kw):
        if not resumed:
            raise KeyboardInterrupt
        return real_summarise(*a, **kw)

    monkeypatch.setattr(plugin, "fit_method", lambda *a, **kw: calls.append(1) or real_fit(*a, **kw))
    monkeypatch.setattr(plugin, "summarise", stop_before_summary)
    cfg = compose_config(args + [f"results_dir={tmp_path / 'cut'}"])
    resumed = False
    with pytest.raises(KeyboardInterrupt):
        execute(cfg)
    resumed, calls[:] = True, []
    record, run_dir = execute(cfg)
    assert calls == [] and record.status == "ok" and not (run_dir / "checkpoint.pt").exists()
    assert record.metrics == reference.metrics | {"cpu_s": record.metrics["cpu_s"]}  # CPU time: the cut run's own
    assert record.train["hyperparameters"] == reference.train["hyperparameters"]
    assert pd.read_csv(run_dir / "curve.csv")["fold"].tolist() == [1, 2, 3]
