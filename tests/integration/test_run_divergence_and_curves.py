"""Runner, real trainings: a learning-rate explosion is recorded as diverged; the tracked learning curve
ends at the reported metrics."""

import json

import pandas as pd

from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config


def test_real_lr_explosion_is_marked_diverged(tmp_path):
    """lr=1e6 blows the kernel parameters up after one Adam step: the next Cholesky sees NaNs."""
    record, run_dir = execute(
        compose_config([f"results_dir={tmp_path}", "trainer.lr=1e6", "trainer.max_iters=60", "dtype=float32"])
    )
    assert record.status == "diverged" and "at iteration 2" in record.error
    assert json.loads((run_dir / "run.json").read_text())["status"] == "diverged"


def test_tracked_learning_curve_ends_at_the_reported_metrics(tmp_path):
    record, run_dir = execute(
        compose_config([f"results_dir={tmp_path}", "trainer.max_iters=45", "trainer.track_every=20",
                        "model.num_inducing=10"])
    )
    curve = pd.read_csv(run_dir / "curve.csv")
    tracked = curve.dropna(subset=["test_nll"])
    assert list(tracked["iteration"]) == [1, 20, 40, 45]
    # the last tracked row is the final model, so it equals the evaluation written to run.json
    assert tracked["test_nll"].iloc[-1] == record.metrics["test_nll"]
    assert tracked["test_mse"].iloc[-1] == record.metrics["test_mse"]
