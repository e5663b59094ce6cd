"""Runner: failures inside a run are recorded in run.json, never lost."""

import json

from dlm_bench import runner
from dlm_bench.cli import compose_config
from dlm_bench.train import TrainResult


def test_divergence_is_recorded(tmp_path, monkeypatch):
    def diverge(self, loss_fn, params, X, y):
        return TrainResult(status="diverged", error="non-finite training loss (nan) at iteration 4", iterations=4,
                           curve=[{"iteration": i, "wall_s": 0.0, "loss": 1.0} for i in range(1, 4)])

    monkeypatch.setattr(runner.Trainer, "fit", diverge)
    record, run_dir = runner.execute(compose_config([f"results_dir={tmp_path}"]))
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == record.status == "diverged"
    assert "iteration 4" in saved["error"] and saved["metrics"] == {}
    assert saved["train"]["iterations"] == 4
    assert len((run_dir / "curve.csv").read_text().strip().splitlines()) == 1 + 3


def test_exception_inside_training_is_recorded_as_failed(tmp_path, monkeypatch):
    def boom(self, loss_fn, params, X, y):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(runner.Trainer, "fit", boom)
    record, run_dir = runner.execute(compose_config([f"results_dir={tmp_path}"]))
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "failed" and saved["error"] == "RuntimeError: simulated crash"
    assert "simulated crash" in (run_dir / "traceback.txt").read_text()


def test_real_lr_explosion_is_marked_diverged(tmp_path):
    """lr=1e6 blows the kernel parameters up after one Adam step: the next Cholesky sees NaNs."""
    record, run_dir = runner.execute(
        compose_config([f"results_dir={tmp_path}", "trainer.lr=1e6", "trainer.max_iters=60", "dtype=float32"])
    )
    assert record.status == "diverged" and "at iteration 2" in record.error
    assert json.loads((run_dir / "run.json").read_text())["status"] == "diverged"


def test_tracked_learning_curve_ends_at_the_reported_metrics(tmp_path):
    record, run_dir = runner.execute(
        compose_config([f"results_dir={tmp_path}", "trainer.max_iters=45", "trainer.track_every=20",
                        "model.num_inducing=10"])
    )
    import pandas as pd

    curve = pd.read_csv(run_dir / "curve.csv")
    tracked = curve.dropna(subset=["test_nll"])
    assert list(tracked["iteration"]) == [1, 20, 40, 45]
    # the last tracked row is the final model, so it equals the evaluation written to run.json
    assert tracked["test_nll"].iloc[-1] == record.metrics["test_nll"]
    assert tracked["test_mse"].iloc[-1] == record.metrics["test_mse"]
