"""Fixed-hyperparameter runs (pretrain_and_freeze): hyperparameters and Z frozen at the SVGP's."""

import torch

from dlm_bench.models.builders import build_bundle
from dlm_bench.models.fixed import evaluate_only, pretrain_and_freeze
from dlm_bench.run.context import prepare_data
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.training import gpytorch_internals
from dlm_bench.training.trainer import Trainer


def setup(overrides):
    cfg = compose_config(overrides + ["trainer.max_iters=40", "trainer.progress=off"])
    prep = prepare_data(cfg, torch.device("cpu"), torch.float64)
    X, y = prep.tensors["train"]
    bundle = build_bundle(cfg, X, y).double()
    trainer = Trainer.from_config(cfg.trainer, seed=cfg.seed)
    return cfg, bundle, trainer, X, y


def snapshot(module, keep):
    return {n: p.detach().clone() for n, p in module.named_parameters() if keep(n)}


def test_fixed_dlm_freezes_hyperparameters_and_z_and_learns_q_from_scratch(monkeypatch):
    cfg, bundle, trainer, X, y = setup(["objective=dlm", "objective.hyperparameters=fixed", "objective.beta=0.5",
                                        "objective.pretrain_model=svgp"])
    pretrained = {}
    real_adopt = type(bundle).adopt_hyperparameters

    def spy(self, pre):  # keep the trained SVGP to compare against
        pretrained["bundle"] = pre
        real_adopt(self, pre)

    monkeypatch.setattr(type(bundle), "adopt_hyperparameters", spy)
    pre_result, info = pretrain_and_freeze(cfg, bundle, X, y, trainer, torch.device("cpu"), torch.float64)
    assert pre_result.status == "ok" and pre_result.iterations == 40
    assert info == {"pretrain_model": "svgp", "pretrain_reused": False, "pretrain_beta": 1.0}
    pre = pretrained["bundle"]
    assert type(pre.mll).__name__ == "VariationalELBO" and pre.mll.beta == 1.0
    assert type(bundle.mll).__name__ == "PredictiveLogLikelihood" and bundle.mll.beta == 0.5

    is_hyper = lambda n: not gpytorch_internals.is_q_u_entry(n)  # noqa: E731
    hyper_pre = snapshot(pre, is_hyper)
    assert any("inducing_points" in n for n in hyper_pre) and any("raw_lengthscale" in n for n in hyper_pre)
    before = snapshot(bundle, is_hyper)
    for n, v in hyper_pre.items():
        assert torch.equal(before[n], v), n  # adopted exactly
    trainable = {n for n, p in bundle.named_parameters() if p.requires_grad}
    assert trainable and all(gpytorch_internals.is_q_u_entry(n) for n in trainable)

    bundle.train()
    q_pre = gpytorch_internals.q_u_module(pre.model.variational_strategy).variational_mean.detach().clone()
    result = trainer.fit(bundle.loss, bundle.trainable_parameters(), X, y)
    assert result.status == "ok" and result.iterations == 40
    after = snapshot(bundle, is_hyper)
    for n, v in before.items():
        assert torch.equal(after[n], v), n  # frozen through training
    q_new = gpytorch_internals.q_u_module(bundle.model.variational_strategy).variational_mean.detach()
    assert not torch.allclose(q_new, q_pre)


def test_fixed_sq_dlm_adopts_the_svgp_kernel_and_z_and_has_nothing_to_train():
    cfg, bundle, trainer, X, y = setup(["objective=sq_dlm", "objective.hyperparameters=fixed",
                                        "objective.pretrain_model=svgp"])
    init_Z = bundle.Z.detach().clone()
    pretrain_and_freeze(cfg, bundle, X, y, trainer, torch.device("cpu"), torch.float64)
    assert bundle.trainable_parameters() == []
    assert not torch.equal(bundle.Z, init_Z)  # the SVGP moved its inducing points; sq-DLM took them
    result = evaluate_only(bundle, X, y)
    assert result.converged and result.iterations == 0 and result.final_loss == bundle.loss(X, y).item()
