"""Tracked learning curves of a non-Gaussian run through execute: the last tracked row equals the
reported metrics."""

import numpy as np
import pandas as pd
import pytest

from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config


@pytest.mark.parametrize("task,metric", [("binary", "test_error"), ("count", "test_mre")])
def test_tracked_curve_of_a_glm_run_ends_at_the_reported_metrics(tmp_path, task, metric):
    rng = np.random.default_rng(1)
    Xd = rng.normal(size=(120, 2))
    f = np.sin(2 * Xd[:, 0])
    y = (f + 0.3 * rng.normal(size=120) > 0).astype(int) if task == "binary" else rng.poisson(np.exp(1 + f))
    pd.DataFrame({"a": Xd[:, 0], "b": Xd[:, 1], "y": y}).to_csv(tmp_path / "t.csv", index=False)
    cfg = compose_config(["dataset=csv", f"dataset.path={tmp_path / 't.csv'}", "dataset.target=y",
                          f"dataset.task={task}", "protocol=dlm_classification", "protocol.train_size=80", "protocol.test_size=25",
                          "model.num_inducing=8", f"results_dir={tmp_path}", "trainer.max_iters=12",
                          "trainer.track_every=5", "trainer.progress=off"])
    record, run_dir = execute(cfg)
    assert record.status == "ok", record.error
    curve = pd.read_csv(run_dir / "curve.csv").dropna(subset=["test_nll"])
    assert list(curve["iteration"]) == [1, 5, 10, 12]
    assert curve["test_nll"].iloc[-1] == record.metrics["test_nll"]
    assert curve[metric].iloc[-1] == record.metrics[metric]
    assert "test_mse" not in curve.columns
    # the val part too (a stopping rule replayed on the curve needs it): the last row is the reported val metric
    assert curve["val_nll"].iloc[-1] == record.metrics["val_nll"]
    assert curve["val_" + metric[5:]].iloc[-1] == record.metrics["val_" + metric[5:]]
