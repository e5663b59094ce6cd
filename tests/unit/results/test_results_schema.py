"""The results-contract checks (dlm_bench/results/schema.py) accept every record the project has written, and what
results.py writes now; the mistyped fields and broken curve.csv files they refuse: tests/integration/test_hostile_inputs.py."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from dlm_bench.results.contract import RunRecord, write_curve_csv, write_run_json
from dlm_bench.results.schema import check_curve_csv, check_run_record

ARCHIVES = sorted((Path(__file__).resolve().parents[3] / "docs" / "reproductions").glob("*/runs.tgz"))


@pytest.mark.skipif(not ARCHIVES, reason="no runs.tgz archives in docs/reproductions")
def test_every_archived_run_json_passes():
    n, bad = 0, []
    for archive in ARCHIVES:
        with tarfile.open(archive) as tar:
            for member in tar:
                if member.name.endswith("run.json"):
                    n += 1
                    why = check_run_record(json.load(tar.extractfile(member)))
                    if why:
                        bad.append((archive.parent.name, member.name, why))
    assert n > 1000 and bad == []


def test_what_results_py_writes_passes(tmp_path):
    rec = RunRecord(status="diverged", error="non-finite", paper="dlm", experiment="e", dataset="d", task=None,
                    model="svgp", objective="dlm", estimator="bmc", likelihood=None, beta=float("nan"), seed=3,
                    split="dlm_regression", train_size=None, num_inducing=None, hyperparameters="fixed",
                    metrics={"test_nll": float("inf")}, train={"final_loss": float("nan")})
    path = write_run_json(tmp_path, rec)
    assert check_run_record(json.loads(path.read_text())) is None  # NaN and inf were written as null
    assert check_curve_csv(write_curve_csv(tmp_path, [])) is None  # header only
    rows = [{"fold": 1, "cpu_s": 0.1, "stop": "tol", "trained": True}, {"fold": 2, "cpu_s": 0.2, "stop": "tol", "trained": False}]
    assert check_curve_csv(write_curve_csv(tmp_path, rows), "sggpm") is None
    assert "no 'iteration' column" in check_curve_csv(tmp_path / "curve.csv", "svgp")


def test_the_schema_module_imports_only_the_standard_library():
    code = "import sys, dlm_bench.results.schema; print(sorted(m for m in ('torch', 'numpy', 'pandas') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
