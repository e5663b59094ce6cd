"""Bad method combinations are one-line ConfigErrors raised before anything is written (the end-to-end
runs of every method: tests/integration/test_methods_end_to_end.py)."""

import pytest

from dlm_bench.errors import ConfigError
from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config


@pytest.mark.parametrize(
    "overrides,needle",
    [
        (["model=sgpr", "estimator=bmc", "estimator.num_samples=10"], "estimator=bmc estimates the likelihood term"),
        (["objective=sq_dlm", "estimator=bmc", "estimator.num_samples=10"], "objective=sq_dlm is closed form"),
        (["model=fitc", "objective=dlm"], "model=fitc is collapsed"),
        (["model=sgpr", "objective.beta=0.5"], "model=sgpr is collapsed"),
        (["objective.hyperparameters=fixed"], "applies to objective=dlm or sq_dlm"),
        (["model=sgpr", "objective=sq_dlm"], "model=sgpr is collapsed"),
        (["estimator=bmc", "estimator.num_samples=0"], "estimator.num_samples must be an integer >= 1"),
        (["estimator.num_samples=5"], "not estimator=exact"),
        (["model=fitc", "trainer.batch_size=32"], "full-batch method"),
        (["objective=sq_dlm", "model.mean=constant"], "zero mean function"),
    ],
)
def test_bad_combinations_are_config_errors(overrides, needle, tmp_path):
    with pytest.raises(ConfigError, match=needle) as err:
        execute(compose_config([f"results_dir={tmp_path}"] + overrides))
    assert "\n" not in str(err.value)
    assert not any(tmp_path.iterdir())  # nothing written for a config error
