"""objective.beta_batch (dlm_bench/batched.py): a beta group trained in one batched model gives the unbatched
runs' results (same seed, same init, same Adam updates: equal to rounding) under the unbatched run names."""

import csv
import json

import pytest

from dlm_bench import runner
from dlm_bench.cli import compose_config
from dlm_bench.errors import ConfigError
from dlm_bench.sweep import run_sweep
from tests.helpers import assert_batched_member_equals

TINY = ["model.num_inducing=10", "trainer.max_iters=100", "dtype=float64", "device=cpu", "launcher=local",
        "trainer.progress=off", "dataset=boston"]
GRID = ["method=dlm,dlm_fixed,beta_elbo", "objective.beta_index=0,2,5"]


def runs(root):
    return {p.parent.name: json.loads(p.read_text()) for p in root.glob("default/*/run.json")}


def test_batched_sweep_equals_unbatched_runs(tmp_path):
    plain = run_sweep(TINY + GRID + [f"results_dir={tmp_path / 'plain'}"])
    assert plain["ok"] == 9
    batched = run_sweep(TINY + GRID + [f"results_dir={tmp_path / 'batched'}", "objective.beta_batch=true"])
    assert (batched["ok"], batched["skipped"]) == (3, 6)  # the first job of each method's group trains all 3
    a, b = runs(tmp_path / "plain"), runs(tmp_path / "batched")
    assert set(a) == set(b) and len(a) == 9  # the same run names
    for name, ra in a.items():
        rb = b[name]
        assert rb["train"]["batched"] == 3 and "batched" not in ra["train"]
        assert set(ra) == set(rb) and set(ra["train"]) | {"batched", "batch_wall_s"} == set(rb["train"])
        assert_batched_member_equals(ra, rb, name)
        ca = list(csv.DictReader((tmp_path / "plain" / "default" / name / "curve.csv").open()))
        cb = list(csv.DictReader((tmp_path / "batched" / "default" / name / "curve.csv").open()))
        assert len(ca) == len(cb) and ca[0].keys() == cb[0].keys()
    # a later sweep, batched or not, finds every run done
    again = run_sweep(TINY + GRID + [f"results_dir={tmp_path / 'batched'}"])
    assert again["skipped"] == 9


def test_run_name_ignores_beta_batch():
    cfg = compose_config(["method=dlm", "objective.beta_index=3"])
    cfg_b = compose_config(["method=dlm", "objective.beta_index=3", "objective.beta_batch=true"])
    assert runner.run_name(cfg) == runner.run_name(cfg_b)


@pytest.mark.parametrize("extra", [["estimator=bmc", "estimator.num_samples=2"], ["trainer.batch_size=64"],
                                   ["trainer.optimizer=lbfgs"], ["model.likelihood=student_t"],
                                   ["estimator=smooth_bmc", "estimator.num_samples=2"]])
def test_unsupported_settings_raise_one_line_config_error(tmp_path, extra):
    cfg = compose_config(["method=dlm", "objective.beta_index=1", "objective.beta_batch=true",
                          f"results_dir={tmp_path}", *extra])
    with pytest.raises(ConfigError, match="objective.beta_batch=true supports") as err:
        runner.execute(cfg)
    assert "\n" not in str(err.value)
