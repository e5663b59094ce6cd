"""paper=pac end to end through execute on boston: every method reports the PAC metrics with the
rounded theta (bad combinations: tests/integration/test_pac_config_errors.py)."""

import json
import math

import pytest

from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config

PAC = ["paper=pac", "eval.pac=true", "protocol=pac", "trainer.max_iters=15", "trainer.progress=off"]
CASES = {
    "kl-PAC-GP": (["model=pac_gp", "objective=pac_kl"], "pac_kl"),
    "sqrt-PAC-GP": (["model=pac_gp", "objective=pac_sqrt", "pac.loss=exp"], "pac_sqrt"),
    "full-GP": (["model=exact_gp"], "mll"),
    "kl-PAC-SGP fitc": (["model=pac_sgp", "objective=pac_kl", "model.num_inducing=20", "model.ard=true"], "pac_kl"),
    "kl-PAC-SGP vfe": (["model=pac_sgp", "objective=pac_kl", "pac.sparse_q=vfe", "model.num_inducing=20"], "pac_kl"),
    "kl-PAC-SGP free": (["model=pac_sgp", "objective=pac_kl", "pac.sparse_q=free", "model.num_inducing=20"], "pac_kl"),
    "VFE": (["model=sgpr", "model.num_inducing=20"], "elbo"),
    "FITC": (["model=fitc", "model.num_inducing=20", "pac.loss=clipped_square"], "fitc"),
}
PAC_METRICS = {"bound", "bound_pinsker", "gibbs_train", "gibbs_test", "kl_over_n", "log_theta", "test_mse"}


@pytest.mark.parametrize("case", list(CASES))
def test_pac_method_runs_end_to_end(case, tmp_path):
    overrides, objective = CASES[case]
    cfg = compose_config([f"results_dir={tmp_path}"] + PAC + overrides)
    _, run_dir = execute(cfg)
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "ok", saved["error"]
    assert saved["objective"] == objective and saved["train_size"] == 405  # 80% of 506
    m = saved["metrics"]
    assert PAC_METRICS <= set(m) and all(math.isfinite(v) for v in m.values())
    assert m["gibbs_train"] <= m["bound"] <= m["bound_pinsker"] and m["bound"] <= 1.0
    T = 14 if "model.ard=true" in overrides else 2
    assert m["log_theta"] == pytest.approx(T * math.log(1201))
    assert ("noise_var" in m) == ("pac.sparse_q=free" not in overrides)
