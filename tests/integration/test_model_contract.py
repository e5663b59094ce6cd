"""The model contract, run on every entry of dlm_bench.models.MODELS (a newly registered model is tested without
editing this file), on a small generated regression table (dataset=csv, 60 rows):

* a ModelSpec with `build=` (trained by the Trainer on `bundle.loss`), for every objective it lists (svgp also
  with objective=sq_dlm, whose bundle build_bundle picks): the configuration passes the declared
  combination rules, a few optimiser steps lower the loss, and the predictions on the test rows are finite with
  positive variance (none only for a method that defines no predictive variance: sq_dlm), and so are the
  predictive metrics;
* a ModelSpec with `execute=` (its own fit loop: lgm_*, savigp, sggpm): one tiny run through execute
  ends with status ok and finite metrics (sggpm on a generated count table).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from dlm_bench.models.builders import BUILDERS, build_bundle
from dlm_bench.models.predictive_metrics import predictive_metrics
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.objectives import OBJECTIVES
from dlm_bench.registry.models import MODELS
from dlm_bench.registry.validation import validate_run
from dlm_bench.run import execute
from dlm_bench.run.context import prepare_data, seed_everything
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.training.trainer import Trainer
from tests.helpers import write_regression_csv

NO_PREDICTIVE_VARIANCE = {"sq_dlm"}  # objectives whose bundles define a mean only (ModelBundle.predict_f)
# the smallest run of each model with its own fit loop: (task of the generated table, its config section's keys);
# a new one needs a line here
TINY_EXECUTE = {
    "lgm_glm": ("regression", ["lgm.max_iters=5"]),
    "lgm_gp": ("regression", ["lgm.max_iters=5", "lgm.hyper_points=20"]),
    "lgm_sparse": ("regression", ["lgm.max_iters=5", "lgm.hyper_points=20", "lgm.num_inducing=8"]),
    "savigp": ("regression", ["savigp.max_iter=2", "savigp.num_samples=20", "savigp.num_inducing=8",
                              "savigp.pred_samples=100"]),
    "sggpm": ("count", ["sggpm.folds=2", "sggpm.max_folds=2", "sggpm.num_sizes=2", "sggpm.size_index=1",
                        "sggpm.max_outer=3"]),
}


def _build_cases():
    for name, spec in MODELS.items():
        if spec.own_loop:
            continue
        for objective in spec.objectives:
            allowed = OBJECTIVES[objective].models
            if allowed is None or name in allowed:
                yield name, objective


BUILD_CASES = list(_build_cases())
EXECUTE_CASES = [name for name, spec in MODELS.items() if spec.own_loop]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """task -> a 60-row generated table: regression (tests/helpers.py), count (Poisson, log rate linear in x0, x1)."""
    d = tmp_path_factory.mktemp("model_contract")
    reg = write_regression_csv(d / "reg.csv", n=60, d=2)
    df = pd.read_csv(reg)
    rng = np.random.default_rng(1)
    df.assign(y=rng.poisson(np.exp(0.5 + 0.5 * df["x0"] - 0.3 * df["x1"]))).to_csv(d / "count.csv", index=False)
    return {"regression": reg, "count": d / "count.csv"}


def data_overrides(tables, tmp_path, task="regression"):
    return ["dataset=csv", f"dataset.path={tables[task]}", "dataset.target=y", f"dataset.task={task}",
            f"results_dir={tmp_path}", "trainer.progress=off"]


def test_every_model_is_covered():
    assert {m for m, _ in BUILD_CASES} | set(EXECUTE_CASES) == set(MODELS)
    assert all(s.execute is not None for s in MODELS.values()), "every model declares what the harness calls"
    assert {m for m, _ in BUILD_CASES} == set(BUILDERS), "every Trainer model has a builder (models/builders.py)"


@pytest.mark.parametrize("name,objective", BUILD_CASES, ids=[f"{m}-{o}" for m, o in BUILD_CASES])
def test_built_model_trains_and_predicts(name, objective, tables, tmp_path):
    cfg = compose_config(data_overrides(tables, tmp_path) + [
        f"model={name}", f"objective={objective}", "model.num_inducing=8", "trainer.max_iters=5", "trainer.lr=0.01",
        "trainer.tol=0"])
    resolve_task_defaults(cfg)  # as execute: likelihood and mean function from the task
    validate_run(cfg)  # the declared combination rules accept what the registry lists
    seed_everything(cfg.seed)
    prep = prepare_data(cfg, torch.device("cpu"), torch.float64)
    X, y = prep.tensors["train"]
    assert 30 <= len(y) <= 45  # ~2/3 of the 60 rows
    bundle = build_bundle(cfg, X, y).double()
    bundle.train()
    params = bundle.trainable_parameters()
    assert params, f"model={name} objective={objective}: nothing to train"
    with torch.no_grad():
        before = bundle.loss(X, y).item()
    result = Trainer.from_config(cfg.trainer, seed=cfg.seed).fit(bundle.loss, params, X, y)
    assert result.status == "ok" and result.iterations == 5, result.error
    bundle.train()
    with torch.no_grad():
        after = bundle.loss(X, y).item()
    assert math.isfinite(before) and after < before, (before, after)

    Xte, yte = prep.tensors["test"]
    bundle.eval()
    mean, var = bundle.predict_f(Xte)
    assert mean.shape == (len(yte),) and torch.isfinite(mean).all()
    if var is None:
        assert objective in NO_PREDICTIVE_VARIANCE, f"model={name} objective={objective} returned no variance"
    else:
        assert var.shape == mean.shape and torch.isfinite(var).all() and (var > 0).all()
    metrics = predictive_metrics(bundle, Xte, yte, 1.0, "test")
    assert "test_mse" in metrics and all(math.isfinite(v) for v in metrics.values()), metrics


@pytest.mark.parametrize("name", EXECUTE_CASES)
def test_executed_model_runs(name, tables, tmp_path):
    if name not in TINY_EXECUTE:
        pytest.fail(f"model={name} has its own execute path: add its smallest run's overrides to TINY_EXECUTE in "
                    f"tests/integration/test_model_contract.py")
    task, overrides = TINY_EXECUTE[name]
    cfg = compose_config(data_overrides(tables, tmp_path, task) + [f"model={name}"] + overrides)
    record, run_dir = execute(cfg)
    assert record.status == "ok", record.error
    assert record.model == name and (run_dir / "run.json").is_file()
    assert record.metrics and all(math.isfinite(v) for v in record.metrics.values()), record.metrics
