"""Runner: failures inside a run are recorded in run.json, never lost (training replaced by a stub; real
runs: tests/integration/test_run_divergence_and_curves.py)."""

import json

from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.training.trainer import Trainer, TrainResult


def test_divergence_is_recorded(tmp_path, monkeypatch):
    def diverge(self, loss_fn, params, X, y, **kwargs):
        return TrainResult(status="diverged", error="non-finite training loss (nan) at iteration 4", iterations=4,
                           curve=[{"iteration": i, "wall_s": 0.0, "loss": 1.0} for i in range(1, 4)])

    monkeypatch.setattr(Trainer, "fit", diverge)
    record, run_dir = execute(compose_config([f"results_dir={tmp_path}"]))
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == record.status == "diverged"
    assert "iteration 4" in saved["error"] and saved["metrics"] == {}
    assert saved["train"]["iterations"] == 4
    assert len((run_dir / "curve.csv").read_text().strip().splitlines()) == 1 + 3


def test_exception_inside_training_is_recorded_as_failed(tmp_path, monkeypatch):
    def boom(self, loss_fn, params, X, y, **kwargs):
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(Trainer, "fit", boom)
    record, run_dir = execute(compose_config([f"results_dir={tmp_path}"]))
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "failed" and saved["error"] == "RuntimeError: simulated crash"
    assert "simulated crash" in (run_dir / "traceback.txt").read_text()
