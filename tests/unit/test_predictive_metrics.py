"""dlm_bench.evaluation.predictive_metrics, the one metrics path: the Gaussian case against scipy, the bundles
without a predictive density (square-loss DLM, free-form PAC-SGP), and tracked learning curves of a
non-Gaussian run (the last tracked row equals the reported metrics)."""

import math

import gpytorch
import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from dlm_bench import runner
from dlm_bench.cli import compose_config
from dlm_bench.evaluation import predictive_metrics
from dlm_bench.likelihoods import GaussianLikelihood
from tests.helpers import make_likelihood

D = torch.float64
MU = torch.tensor([0.2, -1.0, 0.7, 2.0], dtype=D)
VAR = torch.tensor([0.3, 0.05, 1.2, 0.5], dtype=D)
Y = torch.tensor([0.0, -1.3, 1.9, 1.1], dtype=D)
X = torch.zeros(4, 1, dtype=D)


class Bundle:
    def __init__(self, likelihood, var=VAR, noise="likelihood"):
        self.likelihood, self.var = likelihood, var
        self.noise = likelihood.noise.reshape(-1)[0] if noise == "likelihood" else noise

    def eval(self):
        pass

    def predict_f(self, X):
        return MU, self.var


def test_gaussian_metrics_against_scipy():
    lik = make_likelihood(GaussianLikelihood, noise=0.4)
    out = predictive_metrics(Bundle(lik), X, Y, 3.0, "test")
    noise = lik.noise.item()  # 0.4 after the constraint's round trip
    assert noise == pytest.approx(0.4, rel=1e-6)
    nll = -stats.norm.logpdf(Y.numpy(), MU.numpy(), np.sqrt(VAR.numpy() + noise)).mean()
    mse = ((Y - MU) ** 2).mean().item()
    assert out == pytest.approx({"test_nll": nll, "test_nll_raw": nll + math.log(3.0),
                                 "test_mse": mse, "test_mse_raw": 9.0 * mse}, rel=1e-12)


def test_no_predictive_density_gives_the_mse_of_the_latent_mean():
    mse = ((Y - MU) ** 2).mean().item()
    want = {"val_mse": pytest.approx(mse, rel=1e-12), "val_mse_raw": pytest.approx(4.0 * mse, rel=1e-12)}
    lik = make_likelihood(GaussianLikelihood)
    assert predictive_metrics(Bundle(lik, var=None), X, Y, 2.0, "val") == want  # square-loss DLM
    assert predictive_metrics(Bundle(lik, noise=None), X, Y, 2.0, "val") == want  # free-form PAC-SGP
    assert predictive_metrics(Bundle(lik), X[:0], Y[:0], 2.0, "val") == {}


def test_a_likelihood_without_the_metrics_contract_is_refused():
    with pytest.raises(TypeError, match="not a registered likelihood"):
        predictive_metrics(Bundle(gpytorch.likelihoods.GaussianLikelihood().double()), X, Y, 1.0, "test")


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
    record, run_dir = runner.execute(cfg)
    assert record.status == "ok", record.error
    curve = pd.read_csv(run_dir / "curve.csv").dropna(subset=["test_nll"])
    assert list(curve["iteration"]) == [1, 5, 10, 12]
    assert curve["test_nll"].iloc[-1] == record.metrics["test_nll"]
    assert curve[metric].iloc[-1] == record.metrics[metric]
    assert "test_mse" not in curve.columns
