"""The batched beta grid as a plugin capability (issue 72): the harness (run/batched.py) runs a group for any family
whose ModelSpec offers a BetaGroup, picks and locks its members, passes in the caller's beta indices, and writes each
member the family hands back through GroupServices -- under the unbatched run's name. Checked with a planted family
whose `train` computes nothing: what lands on disk is the harness's doing alone."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dlm_bench.config.capabilities import BetaGroup
from dlm_bench.registry.models import MODELS
from dlm_bench.results.outcome import Outcome
from dlm_bench.run import batched, run_dir_for, validate_point
from dlm_bench.sweeps.compose import compose_config

TINY = ["model.num_inducing=10", "dtype=float64", "device=cpu", "trainer.progress=off", "dataset=boston",
        "method=dlm", "objective.beta_batch=true"]


def planted_family(calls: list, fail_eval: int | None = None) -> BetaGroup:
    def train(cfg, members, prep, device, dtype, services):
        n = prep.tensors["train"][0].shape[0]
        calls.append({"ks": [k for k, _, _ in members], "n": n, "group_dir": services.group_dir})
        out = {}
        for k, mcfg, run_dir in members:
            outcome = Outcome(status="ok", metrics={"beta_seen": float(mcfg.objective.beta), "n_seen": float(n)},
                              train={"batched": len(members)})
            error = ValueError(f"planted evaluation error of member {k}") if k == fail_eval else None
            out[k] = services.write(mcfg, run_dir, outcome, 1, error)
        return out

    return BetaGroup(requested=lambda cfg: True, check=lambda cfg: None, full_batch=lambda cfg, n: True, train=train)


@pytest.fixture
def planted(monkeypatch):
    def plant(calls, fail_eval=None):
        spec = dataclasses.replace(MODELS["svgp"], beta_group=planted_family(calls, fail_eval))
        monkeypatch.setitem(MODELS, "svgp", spec)
        return spec
    return plant


def _run(tmp_path, spec, own, beta_indices):
    cfg = compose_config(TINY + [f"objective.beta_index={own}", f"results_dir={tmp_path}"])
    validate_point(cfg, overrides=[])
    never = lambda c: pytest.fail("a member ran unbatched")  # noqa: E731
    return cfg, batched.execute_group(cfg, spec, never, beta_indices)


def test_the_harness_writes_each_member_under_its_unbatched_name(tmp_path, planted):
    calls = []
    cfg, (record, run_dir) = _run(tmp_path, planted(calls), own=1, beta_indices=[0, 3, 99])
    assert len(calls) == 1 and calls[0]["ks"] == [0, 1, 3]  # the caller's indices (99: off the grid), plus its own
    n = calls[0]["n"]
    assert calls[0]["group_dir"] == batched.group_lock_dir(cfg)
    for k in (0, 1, 3):
        plain = compose_config(TINY[:-1] + [f"objective.beta_index={k}", f"results_dir={tmp_path}"])
        rec = json.loads((run_dir_for(plain) / "run.json").read_text())
        # beta of grid point k is n / 2**k (Wei et al. 2021, sec. 6), set by the harness before the family trains
        assert rec["metrics"] == {"beta_seen": n / 2**k, "n_seen": n} and rec["status"] == "ok"
        assert rec["train"]["batched"] == 3 and rec["beta"] == n / 2**k
    assert run_dir == run_dir_for(compose_config(TINY[:-1] + ["objective.beta_index=1", f"results_dir={tmp_path}"]))
    assert record.metrics["beta_seen"] == n / 2


def test_members_done_already_are_left_out_and_an_evaluation_error_is_recorded(tmp_path, planted):
    calls = []
    _run(tmp_path, planted(calls), own=0, beta_indices=[0, 1])
    _, (record, run_dir) = _run(tmp_path, planted(calls, fail_eval=2), own=2, beta_indices=[0, 1, 2])
    assert calls[1]["ks"] == [2]  # 0 and 1 are ok on disk
    assert record.status == "failed" and record.error == "ValueError: planted evaluation error of member 2"
    assert "planted evaluation error of member 2" in (run_dir / "traceback.txt").read_text()
