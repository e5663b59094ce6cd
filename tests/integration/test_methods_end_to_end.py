"""Every method runs end to end through execute on the shipped boston data (bad combinations:
tests/integration/test_method_config_errors.py)."""

import json
import math

import pytest

from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config

CASES = {
    "sgpr": (["model=sgpr"], "sgpr", "elbo", "joint"),
    "fitc": (["model=fitc"], "fitc", "fitc", "joint"),
    "dlm_fixed": (["objective=dlm", "objective.hyperparameters=fixed"], "svgp", "dlm", "fixed"),
    "sq_dlm": (["objective=sq_dlm"], "svgp", "sq_dlm", "joint"),
    "sq_dlm_fixed": (["objective=sq_dlm", "objective.hyperparameters=fixed"], "svgp", "sq_dlm", "fixed"),
    "bmc_dlm": (["objective=dlm", "estimator=bmc", "estimator.num_samples=5"], "svgp", "dlm", "joint"),
    "bmc_elbo": (["estimator=bmc", "estimator.num_samples=5"], "svgp", "elbo", "joint"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_method_runs_end_to_end(case, tmp_path):
    overrides, model, objective, hyper = CASES[case]
    cfg = compose_config([f"results_dir={tmp_path}", "trainer.max_iters=25", "trainer.progress=off"] + overrides)
    record, run_dir = execute(cfg)
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "ok", saved["error"]
    assert (saved["model"], saved["objective"], saved["hyperparameters"]) == (model, objective, hyper)
    metrics = saved["metrics"]
    assert all(math.isfinite(v) for v in metrics.values())
    if objective == "sq_dlm":  # no predictive variance: MSE only, no NLL, no noise
        assert {"test_mse", "val_mse", "test_mse_raw"} <= set(metrics) and "test_nll" not in metrics
        assert "noise_var" not in metrics and saved["likelihood"] is None
    else:
        assert {"test_nll", "test_mse", "val_nll", "val_mse", "noise_var"} <= set(metrics)
    train = saved["train"]
    if hyper == "fixed":
        assert train["pretrain_iterations"] == 25
        assert train["iterations"] == (0 if objective == "sq_dlm" else 25)
    else:
        assert train["iterations"] == 25 and "pretrain_iterations" not in train
