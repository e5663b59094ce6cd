"""DLM paper fidelity (docs/dlm_fidelity.md): the regression stage 1 is the collapsed SGPR, pretrain once, beta
selection on grid points only, tol_on, stochastic_lr, Fig. 15's M per dataset, run names."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pandas as pd
import pytest
import torch

from dlm_bench.config.beta_grid import select_beta
from dlm_bench.models.builders import build_bundle
from dlm_bench.models.fixed import pretrain_and_freeze, pretrain_config
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run import execute, run_name
from dlm_bench.run.context import prepare_data, seed_everything
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.training import gpytorch_internals
from dlm_bench.training.stage1_store import PretrainStore, pretrain_key
from dlm_bench.training.trainer import Trainer, TrainResult
from tests.helpers import glm_overrides

SMALL = ["protocol.train_size=120", "model.num_inducing=8", "trainer.max_iters=30", "trainer.progress=off"]


def _data(cfg):
    resolve_task_defaults(cfg)
    seed_everything(cfg.seed)
    prep = prepare_data(cfg, torch.device("cpu"), torch.float64)
    return prep.tensors["train"]


def _sgpr_reference(seed=0):
    """A collapsed SGPR trained on the same split, built and trained independently of the fixed-run code."""
    cfg = compose_config(["method=sgpr", f"seed={seed}", *SMALL])
    X, y = _data(cfg)
    sgpr = build_bundle(cfg, X, y).double()
    sgpr.train()
    Trainer.from_config(cfg.trainer, seed=seed).fit(sgpr.loss, sgpr.trainable_parameters(), X, y)
    return sgpr


@pytest.mark.parametrize("method", ["dlm_fixed", "sq_dlm_fixed"])
def test_regression_fixed_run_freezes_the_collapsed_sgpr_bit_identical(method):
    cfg = compose_config([f"method={method}", "objective.beta=0.5", *SMALL])
    X, y = _data(cfg)
    bundle = build_bundle(cfg, X, y).double()
    trainer = Trainer.from_config(cfg.trainer, seed=cfg.seed)
    result, info = pretrain_and_freeze(cfg, bundle, X, y, trainer, torch.device("cpu"), torch.float64)
    assert result.status == "ok" and info["pretrain_model"] == "sgpr"
    ref = _sgpr_reference()
    if method == "dlm_fixed":
        kernel, Z = bundle.model.covar_module, bundle.model.variational_strategy.inducing_points
        assert torch.equal(bundle.likelihood.noise, ref.likelihood.noise)
    else:
        kernel, Z = bundle.kernel, bundle.Z
    assert torch.equal(Z, ref.Z)
    for (n, a), (_, b) in zip(kernel.named_parameters(), ref.kernel.named_parameters()):
        assert torch.equal(a, b), n
    assert not any(p.requires_grad for n, p in bundle.named_parameters() if not gpytorch_internals.is_q_u_entry(n))


def test_fixed_run_records_its_stage1_and_matches_the_sgpr_noise(tmp_path):
    cfg = compose_config(["method=dlm_fixed", f"results_dir={tmp_path}", *SMALL])
    record, run_dir = execute(cfg)
    saved = json.loads((run_dir / "run.json").read_text())
    assert saved["status"] == "ok"
    train = saved["train"]
    assert train["pretrain_model"] == "sgpr" and train["pretrain_reused"] is False
    assert train["total_wall_s"] >= train["wall_s"] and train["tol_on"] == "mean"
    assert saved["metrics"]["noise_var"] == _sgpr_reference().likelihood.noise.item()


def test_pretrain_once_over_a_beta_grid_and_reuse_is_bit_identical(tmp_path, monkeypatch):
    """4 betas of fixed DLM + fixed sq-DLM: one stage-1 training; a reused stage 1 gives the same run."""
    fits = []
    real_fit = PretrainStore.get_or_train

    def counting(self, key, bundle, fit):
        def counted():
            fits.append(key)
            return fit()
        return real_fit(self, key, bundle, counted)

    monkeypatch.setattr(PretrainStore, "get_or_train", counting)
    records = []
    for method, k in [("dlm_fixed", 0), ("dlm_fixed", 2), ("dlm_fixed", 4), ("dlm_fixed", 6), ("sq_dlm_fixed", 3)]:
        cfg = compose_config([f"method={method}", f"objective.beta_index={k}", f"results_dir={tmp_path / 'a'}", *SMALL])
        records.append(execute(cfg)[0])
    assert len(fits) == 1  # trained once, not 5 times
    assert [r.train["pretrain_reused"] for r in records] == [False, True, True, True, True]
    assert len(list((tmp_path / "a" / "_pretrain").iterdir())) == 1
    # the same grid point alone in a fresh store (stage 1 trained in that run) gives bit-identical results
    cfg = compose_config(["method=dlm_fixed", "objective.beta_index=4", f"results_dir={tmp_path / 'b'}", *SMALL])
    alone = execute(cfg)[0]
    assert alone.train["pretrain_reused"] is False
    assert alone.metrics == records[2].metrics and alone.train["final_loss"] == records[2].train["final_loss"]


def test_pretrain_store_concurrent_callers_train_once(tmp_path):
    """Two concurrent callers of one key: one trains (under the O_EXCL lock), the other waits and loads."""
    calls = []

    def make():
        return torch.nn.Linear(2, 1).double()

    def fit_for(module):
        def fit():
            calls.append(1)
            time.sleep(0.3)
            with torch.no_grad():
                module.weight.fill_(1.5)
            return TrainResult(iterations=7, converged=True)
        return fit

    store = PretrainStore(tmp_path, poll_s=0.05)
    mods, out = [make(), make()], [None, None]

    def worker(i):
        out[i] = store.get_or_train("k", mods[i], fit_for(mods[i]))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert sorted(r[1] for r in out) == [False, True] and all(r[0].iterations == 7 for r in out)
    assert all(torch.equal(m.weight, torch.full((1, 2), 1.5, dtype=torch.float64)) for m in mods)
    assert sorted(p.name for p in (tmp_path / "_pretrain" / "k").iterdir()) == ["meta.json", "state.pt", "state.pt.sha256"]


def test_pretrain_key_ignores_beta_and_estimator_but_not_the_data():
    base = ["method=dlm_fixed", *SMALL]
    k = lambda extra: pretrain_key(pretrain_config(compose_config(base + extra)))  # noqa: E731
    assert k(["objective.beta=0.5"]) == k(["objective.beta_index=3"]) == k(["method=sq_dlm_fixed"])
    assert k(["seed=1"]) != k([]) and k(["protocol.train_size=100"]) != k([])


def test_select_beta_never_picks_an_off_grid_beta():
    """beta=1 (beta_index null: the ELBO line, or elbo-method runs) has the best val_nll but is off the grid."""
    nan = float("nan")
    df = pd.DataFrame({
        "dataset": ["d"] * 5, "method": ["svgp-elbo"] * 5, "train_size": [100] * 5, "seed": [0] * 5,
        "status": ["ok"] * 5,
        "beta": [1.0, 100.0, 50.0, 25.0, 1.0],
        "cfg.objective.beta_index": [nan, 0, 1, 2, nan],
        "val_nll": [0.1, 0.5, 0.3, 0.4, 0.05],
    })
    sel = select_beta(df)
    assert sel["beta"].tolist() == [50.0]  # by hand: the smallest val_nll among the grid rows (0.3 at n/2)
    # a table with no grid at all (betas given by value, dlm_demo) still selects among its rows
    assert select_beta(df[df["cfg.objective.beta_index"].isna()])["beta"].tolist() == [1.0]


def test_tol_on_sum_is_the_mean_rule_n_times_stricter():
    torch.manual_seed(0)
    X = torch.randn(200, 1, dtype=torch.float64)
    y = X[:, 0] * 2 + 0.1 * torch.randn(200, dtype=torch.float64)

    def run(**kw):
        w = torch.zeros(1, dtype=torch.float64, requires_grad=True)
        r = Trainer(lr=0.01, max_iters=3000, window=20, progress=False, **kw).fit(
            lambda xb, yb: ((xb[:, 0] * w - yb) ** 2).mean(), [w], X, y)
        return r.iterations, r.converged

    mean_it, sum_it = run(tol=1e-4), run(tol=1e-4, tol_on="sum")
    assert sum_it[0] > mean_it[0] and sum_it[1]
    assert run(tol=1e-4 / 200) == sum_it  # reference: the mean rule with tol / N


def test_stochastic_lr_is_the_adam_step_with_minibatches_only():
    X = torch.randn(10, 1, dtype=torch.float64)
    y = torch.ones(10, dtype=torch.float64)
    for batch, want in [(5, 0.003), (None, 0.5)]:
        w = torch.zeros(1, dtype=torch.float64, requires_grad=True)
        Trainer(lr=0.5, stochastic_lr=0.003, batch_size=batch, max_iters=1, progress=False).fit(
            lambda xb, yb: ((w - yb) ** 2).mean(), [w], X, y)
        assert w.item() == pytest.approx(want, rel=1e-6)  # Adam's first step moves by exactly lr (sign of -grad)


def test_fig15_m_per_dataset_and_song_protocol():
    for data, m in [("pol", 100), ("cadata", 206), ("sarcos", 100), ("song", 100)]:  # the paper's Table 1
        cfg = compose_config(["experiment=dlm_supp_fig15", f"dlm_data={data}"])
        assert cfg.model.num_inducing == m and cfg.dataset.name == data
    song = compose_config(["experiment=dlm_supp_fig15", "dlm_data=song"])
    ref = compose_config(["protocol=dlm_song"])
    assert song.protocol == ref.protocol


def test_run_names_default_joint_unchanged_fixed_regression_new():
    assert run_name(compose_config([])) == "boston_svgp_elbo_beta1_seed0_fdd973a4"
    fixed = ["objective=dlm", "objective.hyperparameters=fixed"]
    # a regression fixed run's stage 1 changed (sgpr): a new name; asking for the old stage 1 gives the old name
    assert run_name(compose_config(fixed)) != run_name(compose_config(fixed + ["objective.pretrain_model=svgp"]))
    joint = ["objective=dlm"]
    assert run_name(compose_config(joint)) == run_name(compose_config(joint + ["objective.pretrain_model=svgp"]))
    assert run_name(compose_config(joint)) == run_name(compose_config(joint + ["trainer.tol_on=mean"]))


def test_bad_new_keys_are_one_line_errors():
    from dlm_bench.cli import UserError

    for bad, key in ((["trainer.tol_on=median"], "trainer.tol_on"), (["objective.pretrain_model=fitc"], "pretrain_model"),
                     (["trainer.stochastic_lr=0"], "trainer.stochastic_lr")):
        with pytest.raises(UserError) as err:
            compose_config(bad)
        assert key in str(err.value) and "\n" not in str(err.value)


def test_gradient_error_per_repetition_by_hand():
    from dlm_bench.estimators.gradient_bias import bias_stats

    g = np.array([3.0, 4.0])
    d = np.array([[3.0, 4.0], [6.0, 8.0]])
    np.testing.assert_allclose(bias_stats("x", d, g).err, [0.0, 25.0])


def _point_then_fixed(root, point, fixed, extra):
    """Run two methods (a joint run and a fixed run at beta_index 2) into one results_dir, in the order given."""
    out = {}
    for method in (point, fixed):
        grid = ["objective.beta_index=2"] if method.endswith("_fixed") else []
        cfg = compose_config([f"method={method}", f"results_dir={root}", *grid, *extra])
        record, run_dir = execute(cfg)
        assert record.status == "ok", record.error
        out[method] = (record, json.loads((run_dir / "run.json").read_text()), run_dir)
    return out


@pytest.mark.parametrize("task", ["regression", "binary", "count"])
def test_a_joint_point_that_is_the_stage1_model_trains_once_with_the_fixed_runs(tmp_path, monkeypatch, glm_tables,
                                                                               task):
    """The SGPR point (regression) and the SVGP + ELBO point (probit, Poisson) are their fixed runs' stage 1: in
    either order one training, and every number equal bit for bit to the other order's."""
    point, fixed = ("sgpr" if task == "regression" else "elbo"), "dlm_fixed"
    if task == "regression":
        extra = SMALL
    else:  # glm_overrides without its results_dir (set per order below); dlm_fixed's trainer settings for both
        extra = [o for o in glm_overrides(glm_tables, task, tmp_path) if not o.startswith("results_dir=")]
        extra += ["trainer.batch_size=6000", "trainer.stochastic_lr=0.001"]
    fits = []
    real = PretrainStore.get_or_train

    def counting(self, key, bundle, fit):
        return real(self, key, bundle, lambda: (fits.append(key), fit())[1])

    monkeypatch.setattr(PretrainStore, "get_or_train", counting)
    a = _point_then_fixed(tmp_path / "a", point, fixed, extra)
    assert len(fits) == 1
    assert a[point][0].train["stage1_reused"] is False and a[fixed][0].train["pretrain_reused"] is True
    assert a[point][0].train["stage1_key"] == a[fixed][0].train["pretrain_key"]
    b = dict(reversed(list(_point_then_fixed(tmp_path / "b", fixed, point, extra).items())))
    assert len(fits) == 2
    assert b[point][0].train["stage1_reused"] is True and b[fixed][0].train["pretrain_reused"] is False
    for m in (point, fixed):
        assert a[m][1]["metrics"] == b[m][1]["metrics"], m
        assert a[m][1]["train"]["final_loss"] == b[m][1]["train"]["final_loss"], m
    # the reused point keeps the loss curve of the fit it loaded
    curve = lambda run_dir: pd.read_csv(run_dir / "curve.csv")["loss"].tolist()  # noqa: E731
    assert curve(a[point][2]) == curve(b[point][2]) and len(curve(a[point][2])) == a[point][0].train["iterations"]
    if point == "sgpr":  # and is the SGPR trained by hand, independently of the store
        assert a[point][1]["metrics"]["noise_var"] == _sgpr_reference().likelihood.noise.item()


def test_only_a_joint_run_identical_to_its_stage1_shares_it():
    from dlm_bench.models.fixed import shared_stage1_key

    def resolved(overrides):  # as execute sees it
        cfg = compose_config(SMALL + overrides)
        resolve_task_defaults(cfg)
        return cfg

    key = lambda extra: shared_stage1_key(resolved(extra))  # noqa: E731
    fixed_key = pretrain_key(pretrain_config(resolved(["method=dlm_fixed"])))
    assert key(["method=sgpr"]) == fixed_key
    assert key(["method=sgpr", "seed=1"]) not in (None, fixed_key)
    assert key(["method=sgpr", "trainer.track_every=10"]) is None  # a learning curve of test metrics: trains itself
    assert key(["method=sgpr", "trainer.max_iters=31"]) != fixed_key
    assert key(["method=dlm_fixed"]) is None and key(["method=fitc"]) is None and key(["method=beta_elbo"]) is None
    assert key(["method=elbo", "objective.beta=0.5"]) is None  # not at beta 1: not a stage-1 model
    assert key(["method=elbo"]) is None  # regression's stage 1 is the collapsed SGPR, not SVGP + ELBO
