"""Bad PAC combinations are one-line ConfigErrors raised before anything is written (the end-to-end PAC
runs: tests/integration/test_pac_end_to_end.py)."""

import pytest

from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config


@pytest.mark.parametrize(
    "overrides,needle",
    [
        (["model=pac_gp"], "use objective=pac_kl or pac_sqrt"),
        (["objective=pac_kl"], "trains model=pac_gp or pac_sgp"),
        (["eval.pac=true"], "the PAC-Bayes evaluation .eval.pac=true. applies to model=sgpr"),
        (["model=pac_gp", "objective=pac_sqrt", "model.kernel=matern"], "model.kernel=rbf"),
        (["model=pac_gp", "objective=pac_kl", "pac.epsilon=0"], "pac.epsilon must be a finite number > 0"),
        (["model=pac_gp", "objective=pac_kl", "pac.delta=2"], "pac.delta must be in"),
        (["model=exact_gp", "objective=dlm"], "model=exact_gp trains its own objective"),
        (["model=sgpr", "pac.sparse_q=free"], "pac.sparse_q applies to model=pac_sgp"),
        (["model=pac_gp", "objective=pac_kl", "pac.loss=hinge"], "pac.loss"),
    ],
)
def test_bad_pac_combinations_are_config_errors(overrides, needle, tmp_path):
    with pytest.raises(Exception, match=needle) as err:
        execute(compose_config([f"results_dir={tmp_path}"] + overrides))
    assert "\n" not in str(err.value).strip()
    assert not any(tmp_path.iterdir())
