"""A sixth paper touches only its own package (issue 72): tests/fixtures/paper_toy/ (not shipped) declares a
closed-form Bayesian linear regression, its config section with range metadata, its report layouts and its conf
options; named in DLM_BENCH_PAPERS it registers, runs, validates and reports through the ordinary commands, with no
edit to any file of dlm_bench. Its test metrics are checked against the same posterior derived in function space
(a GP with the linear kernel prior_var x x'), not the plugin's weight-space formulas."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from tests.helpers import cli_command

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def toy(args, **kw):
    env = {**os.environ, "DLM_BENCH_PAPERS": "paper_toy.paper", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(FIXTURES), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(cli_command() + args, env=env, capture_output=True, text=True, timeout=300, **kw)


def function_space_reference(cfg, prior_var, noise_var):
    """Predictive mean and variance of y* with K = prior_var X X' on the run's own split (normalised units)."""
    from dlm_bench import data

    ds = data.load_from_config(cfg.dataset)
    split = data.make_split(cfg.protocol, ds, cfg.seed)
    X, Xt = split.x_stats.transform(ds.X[split.train]), split.x_stats.transform(ds.X[split.test])
    y, yt = split.y_stats.transform(ds.y[split.train]), split.y_stats.transform(ds.y[split.test])
    K, Ks = prior_var * X @ X.T, prior_var * Xt @ X.T
    L = np.linalg.cholesky(K + noise_var * np.eye(len(y)))
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    V = np.linalg.solve(L, Ks.T)
    mu = Ks @ alpha
    var = prior_var * np.sum(Xt * Xt, 1) - np.sum(V * V, 0) + noise_var
    log_ev = -0.5 * y @ alpha - np.log(np.diag(L)).sum() - 0.5 * len(y) * np.log(2 * np.pi)
    nll = np.mean(0.5 * np.log(2 * np.pi * var) + 0.5 * (yt - mu) ** 2 / var)
    return {"test_mse": np.mean((mu - yt) ** 2), "test_nll": nll, "log_evidence": log_ev}


def test_a_sixth_paper_registers_runs_and_reports_from_its_own_package(tmp_path):
    listed = toy(["experiments"])
    assert listed.returncode == 0, listed.stderr
    assert "toy_blr" in listed.stdout  # its model kind and its experiment, from its own conf folder

    results = tmp_path / "res"
    run = toy(["run", "experiment=toy_blr", "toy.prior_var=0.5", "toy.noise_var=0.2", f"results_dir={results}"])
    assert run.returncode == 0, run.stderr
    (rj,) = results.glob("toy_blr/*/run.json")
    rec = json.loads(rj.read_text())
    assert rec["status"] == "ok" and rec["paper"] == "toy" and rec["method"] == "toy_blr-blr"
    # an own-loop model by its declaration, not by a central list (results/labels.py): the run line names its variant
    assert "toy_blr blr beta=" in run.stdout + run.stderr
    cfg = OmegaConf.create(rec["config"])
    ref = function_space_reference(cfg, 0.5, 0.2)
    for key, value in ref.items():
        assert rec["metrics"][key] == pytest.approx(value, rel=1e-9), key

    bad = toy(["run", "experiment=toy_blr", "toy.noise_var=-1", f"results_dir={results}"])
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["dlm-bench: error: toy.noise_var must be a finite number > 0, got -1.0"]

    out = tmp_path / "report"
    rep = toy(["report", str(results), "--out", str(out)])
    assert rep.returncode == 0, rep.stderr
    table = pd.read_csv(out / "toy_blr_summary.csv")  # the toy paper's own layout (paper_toy/layouts.yaml)
    cell = table[(table["series"] == "BLR") & (table["metric"] == "test_mse")]
    assert cell["mean"].tolist() == [pytest.approx(ref["test_mse"], rel=1e-9)]
    assert (out / "toy_blr_mse_vs_prior.png").is_file()


def test_without_the_declaration_the_toy_paper_does_not_exist(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DLM_BENCH_PAPERS"}
    run = subprocess.run(cli_command() + ["run", "model=toy_blr", f"results_dir={tmp_path}"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and "unknown model 'toy_blr'" in run.stderr


def test_discovery_imports_no_torch():
    """Listing the papers reads their declarations only: no plugin, no torch (the toy's included)."""
    code = ("import sys; from dlm_bench.config.papers import papers; from dlm_bench.registry.models import MODELS; "
            "from dlm_bench.report.layouts import SPECS; "
            "print(sorted(papers()), 'toy_blr' in MODELS, 'toy_blr' in SPECS, 'torch' in sys.modules)")
    env = {**os.environ, "DLM_BENCH_PAPERS": "paper_toy.paper", "PYTHONPATH": str(FIXTURES)}
    import sys

    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["['dlm',", "'fp',", "'pac',", "'savigp',", "'sggpm',", "'toy']", "True", "True",
                                  "False"], out.stderr
