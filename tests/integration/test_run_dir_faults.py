"""The run directory under faults (issue 27): probed before training, rescued when the final write fails, stale
temp files of an interrupted write removed, and a file-size limit refused before any training."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dlm_bench.cli import main
from dlm_bench.errors import ResultsNotWritten
from dlm_bench.run import execute, run_dir_for
from dlm_bench.run import record as record_module
from dlm_bench.sweeps.compose import compose_config

FAST = ["trainer.max_iters=3", "model.num_inducing=5", "trainer.progress=off"]


def test_a_failed_final_write_rescues_the_results_and_names_the_place(tmp_path, monkeypatch, capsys):
    cfg = compose_config(FAST + [f"results_dir={tmp_path}"])
    run_dir = run_dir_for(cfg)
    real = record_module.write_run_json

    def disk_full(where, rec):  # the disk fills during training: only the real run dir is affected
        if where == run_dir:
            raise OSError(28, "No space left on device")
        return real(where, rec)

    monkeypatch.setattr(record_module, "write_run_json", disk_full)
    assert main(["run"] + FAST + [f"results_dir={tmp_path}"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    rescued = tmp_path / ".rescued" / run_dir.name
    assert len(err) == 1 and "No space left on device" in err[0] and str(rescued) in err[0]
    rec = json.loads((rescued / "run.json").read_text())
    assert rec["status"] == "ok" and rec["metrics"]["test_nll"] > 0 and (rescued / "curve.csv").is_file()
    assert not (run_dir / "curve.csv").exists() and not (run_dir / "run.json").exists()  # runs again next time
    with pytest.raises(ResultsNotWritten):
        execute(compose_config(FAST + [f"results_dir={tmp_path}"]))


def test_stale_temp_files_of_an_interrupted_write_are_removed_by_the_next_run(tmp_path):
    cfg = compose_config(FAST + [f"results_dir={tmp_path}"])
    run_dir = run_dir_for(cfg)
    run_dir.mkdir(parents=True)
    stale = [run_dir / ".run.json.abc123.tmp", run_dir / ".curve.csv.xyz.tmp"]
    for p in stale:
        p.write_text("{")
    other = run_dir / "notes.tmp"  # not ours: kept
    other.write_text("x")
    record, _ = execute(cfg)
    assert record.status == "ok" and not any(p.exists() for p in stale) and other.exists()
    assert not list(run_dir.glob(".write-probe-*"))


def test_a_run_dir_that_is_a_file_fails_before_training(tmp_path, capsys):
    target = tmp_path / "afile"
    target.write_text("x")
    assert main(["run"] + FAST + [f"run_dir={target}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"dlm-bench: error: cannot write results to {target}")


def test_a_file_size_limit_below_the_probe_fails_before_training(tmp_path):
    """ulimit -f 1024 (1 MiB): run.json would fit, but a long curve.csv might not; the 2 MB probe fails first."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, 2**20));"
            "from dlm_bench.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", code, "run"] + FAST + [f"results_dir={tmp_path}"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "cannot write results to" in proc.stderr
    assert "File too large" in proc.stderr
    assert not list(tmp_path.rglob("run.json")) and not list(tmp_path.rglob("curve.csv"))
