"""The airline experiment configs on a generated fixture (the real data, ~2M rows, needs a download):
a synthetic 8-column binary table is written where the one-off npz conversion of airline is cached,
then one grid point of dlm_airline_smoke / dlm_samplers_airline runs through execute."""

import json

import numpy as np
import pytest

from dlm_bench.data.fetch import FORMAT_VERSION
from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config


@pytest.fixture
def airline_fixture(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(9000, 8))
    y = (X[:, 0] - 0.5 * X[:, 5] + 0.5 * rng.normal(size=9000) > 0).astype(float)
    path = tmp_path / "cache" / "processed" / f"airline.v{FORMAT_VERSION}.npz"
    path.parent.mkdir(parents=True)
    np.savez(path, X=X, y=y, names=np.array([f"x{i}" for i in range(8)]))
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    return tmp_path


@pytest.mark.parametrize("experiment,extra", [
    ("dlm_airline_smoke", ["method=dlm", "objective.beta=0.1", "trainer.epochs=2"]),
    ("dlm_samplers_airline_smoke", ["method=dlm_ups1", "objective.beta=10", "trainer.epochs=1", "protocol.train_size=2000",
                              "protocol.test_size=1000", "model.num_inducing=10"]),
])
def test_airline_grid_point_on_fixture(airline_fixture, experiment, extra):
    cfg = compose_config([f"experiment={experiment}", f"results_dir={airline_fixture / 'results'}",
                          "trainer.progress=off", *extra])
    record, run_dir = execute(cfg)
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "ok", saved["error"]
    assert saved["likelihood"] == "probit" and saved["task"] == "binary"
    assert saved["train"]["epochs"] == cfg.trainer.epochs
    n = cfg.protocol.train_size
    assert saved["train_size"] == n and saved["train"]["iterations"] == cfg.trainer.epochs * n // 1000
    assert {"test_nll", "test_error"} <= set(saved["metrics"]) and "val_nll" not in saved["metrics"]
    assert saved["config"]["model"]["ard"] is True
    assert saved["config"]["model"]["whiten"] is False  # upstream nonconjugate: UnwhitenedVariationalStrategy


def test_airline_fixed_dlm_stage1_runs_its_full_epochs_once(airline_fixture):
    """Fig. 1(f) / suppl. Fig. 7 fixed DLM: the SVGP stage trains objective.pretrain_epochs (smoke: 3) epochs,
    whatever the grid point's trainer.epochs, and the second epoch count reuses it."""
    seen = []
    for epochs in (1, 2):
        cfg = compose_config(["experiment=dlm_airline_smoke", f"results_dir={airline_fixture / 'results'}",
                              "trainer.progress=off", "method=dlm_fixed", "objective.beta=1",
                              f"trainer.epochs={epochs}", "protocol.train_size=2000", "protocol.test_size=500",
                              "model.num_inducing=10"])
        record, _ = execute(cfg)
        assert record.status == "ok", record.error
        t = record.train
        assert t["pretrain_model"] == "svgp" and t["pretrain_iterations"] == 3 * 2000 // 1000
        assert t["iterations"] == epochs * 2000 // 1000
        seen.append(t["pretrain_reused"])
    assert seen == [False, True]
