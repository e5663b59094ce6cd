"""objective.pretrain_beta (issue 55, departure test 2): the fixed-DLM stage 1 as a beta-SVGP at the run's own beta
(Wei et al. 2021, eq. 2 with beta: the beta-ELBO) instead of one ELBO stage at beta = 1. Checked against an SVGP
trained by hand at that beta, independently of the fixed-run code, and against the old path at beta = 1."""

from __future__ import annotations

import pytest
import torch

from dlm_bench.cli import UserError
from dlm_bench.errors import ConfigError
from dlm_bench.models.builders import build_bundle
from dlm_bench.models.fixed import pretrain_and_freeze, pretrain_config
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run import run_name
from dlm_bench.run.context import prepare_data, seed_everything
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.training.stage1_store import pretrain_key
from dlm_bench.training.trainer import Trainer

SMALL = ["protocol.train_size=120", "model.num_inducing=8", "trainer.max_iters=30", "trainer.progress=off"]
SVGP_STAGE1 = ["method=dlm_fixed", "objective.pretrain_model=svgp", *SMALL]


def _cfg(extra):
    cfg = compose_config(SVGP_STAGE1 + extra)
    resolve_task_defaults(cfg)
    return cfg


def _data(cfg):
    seed_everything(cfg.seed)
    return prepare_data(cfg, torch.device("cpu"), torch.float64).tensors["train"]


def _frozen(extra):
    """The bundle of a fixed run after stage 1 (kernel, noise and Z adopted and frozen) and the stage-1 info."""
    cfg = _cfg(extra)
    X, y = _data(cfg)
    bundle = build_bundle(cfg, X, y).double()
    result, info = pretrain_and_freeze(cfg, bundle, X, y, Trainer.from_config(cfg.trainer, seed=cfg.seed),
                                       torch.device("cpu"), torch.float64)
    assert result.status == "ok"
    return bundle, info


def _hyper(bundle):
    m = bundle.model
    return (m.covar_module.base_kernel.lengthscale.detach().clone(), m.covar_module.outputscale.detach().clone(),
            bundle.likelihood.noise.detach().clone(), m.variational_strategy.inducing_points.detach().clone())


def test_stage1_key_moves_with_beta_only_under_same():
    key = lambda extra: pretrain_key(pretrain_config(_cfg(extra)))  # noqa: E731
    old = key(["objective.beta=1.0"])
    # at beta = 1 the beta-SVGP stage 1 is the old stage 1: same key, so the stored state is shared
    assert key(["objective.beta=1.0", "objective.pretrain_beta=same"]) == old
    # under the old reading every beta shares one stage 1; under `same` each beta has its own
    assert key(["objective.beta=0.5"]) == old
    assert key(["objective.beta=0.5", "objective.pretrain_beta=same"]) != old
    assert pretrain_config(_cfg(["objective.beta=0.5", "objective.pretrain_beta=same"])).objective.beta == 0.5


def test_run_names_change_only_for_fixed_runs_under_same():
    name = lambda extra: run_name(compose_config(SVGP_STAGE1 + extra))  # noqa: E731
    assert name(["objective.pretrain_beta=one"]) == name([])  # the default: existing names stay valid
    assert name(["objective.pretrain_beta=same"]) != name([])
    joint = lambda extra: run_name(compose_config(["method=dlm", *SMALL] + extra))  # noqa: E731
    assert joint(["objective.pretrain_beta=same"]) == joint([])  # a joint run has no stage 1


def test_same_freezes_the_hyperparameters_of_a_beta_svgp_trained_by_hand():
    beta = 0.25
    bundle, info = _frozen([f"objective.beta={beta}", "objective.pretrain_beta=same"])
    assert info["pretrain_model"] == "svgp" and info["pretrain_beta"] == beta
    # reference: SVGP + beta-ELBO (method=beta_elbo) built and trained here, with the same data, seed and trainer
    # (beta_elbo's preset starts the noise at 1; the fixed run's stage 1 at the model default 0.1)
    ref_cfg = compose_config(["method=beta_elbo", f"objective.beta={beta}", "model.noise_init=0.1", *SMALL])
    resolve_task_defaults(ref_cfg)
    X, y = _data(ref_cfg)
    ref = build_bundle(ref_cfg, X, y).double()
    ref.train()
    Trainer.from_config(ref_cfg.trainer, seed=ref_cfg.seed).fit(ref.loss, ref.trainable_parameters(), X, y)
    for got, want in zip(_hyper(bundle), _hyper(ref)):
        assert torch.equal(got, want)
    # and the beta = 1 stage 1 is a different model (the option changes what is frozen)
    one, _ = _frozen([f"objective.beta={beta}"])
    assert not torch.equal(_hyper(one)[2], _hyper(bundle)[2])


def test_same_at_beta_one_is_the_old_path_bit_for_bit():
    a, info_a = _frozen(["objective.beta=1.0", "objective.pretrain_beta=same"])
    b, info_b = _frozen(["objective.beta=1.0"])
    assert info_a["pretrain_beta"] == info_b["pretrain_beta"] == 1.0
    for got, want in zip(_hyper(a), _hyper(b)):
        assert torch.equal(got, want)


def test_same_with_the_collapsed_sgpr_or_a_batched_group_is_refused():
    # regression's auto stage 1 is the collapsed SGPR, which has no beta: refused when the config is composed
    with pytest.raises(UserError, match="pretrain_model=svgp"):
        compose_config(["method=dlm_fixed", "objective.pretrain_beta=same", *SMALL])
    with pytest.raises(UserError, match="one or same"):
        compose_config(SVGP_STAGE1 + ["objective.pretrain_beta=half"])
    compose_config(["method=dlm", "objective.pretrain_beta=same", *SMALL])  # a joint run: nothing to refuse
    from dlm_bench.models.beta_group import check_supported

    check_supported(compose_config(SVGP_STAGE1 + ["objective.beta_batch=true"]))
    with pytest.raises(ConfigError, match="pretrain_beta"):
        check_supported(compose_config(SVGP_STAGE1 + ["objective.pretrain_beta=same", "objective.beta_batch=true"]))
