"""SAVIGP's fit resumes from a checkpoint (block_optimizer.py, training/checkpoint.py) to the same numbers an
uninterrupted fit ends with: parameters, ELBO curve and final ELBO equal to the digit on CPU, for L-BFGS (a fresh one
per block) and Adam (its state saved per block), with fixed and with resampled Monte Carlo samples."""

import pytest
import torch

from dlm_bench.savigp.block_optimizer import fit
from dlm_bench.savigp.likelihoods import Gaussian
from dlm_bench.savigp.model import Savigp
from dlm_bench.training.checkpoint import Checkpoint


@pytest.fixture(autouse=True)
def float64_default():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def _problem():
    g = torch.Generator().manual_seed(3)
    X = torch.rand(30, 2, generator=g) * 3
    y = torch.sin(X.sum(1)) + 0.1 * torch.randn(30, generator=g)
    model = Savigp([X[:6].clone()], Gaussian(0.5), posterior="mog", components=2, estimator="reparam",
                   lengthscale=1.3, variance=0.9)
    return model, X, y


@pytest.mark.parametrize("optimizer, resample", [("lbfgs", False), ("adam", True)])
def test_a_resumed_fit_ends_where_an_uninterrupted_one_does(tmp_path, optimizer, resample):
    kw = dict(num_samples=20, evals={"mog": 4, "hyp": 3, "ll": 2}, optimizer=optimizer, lr=0.02, xtol=0.0,
              ftol=0.0, resample=resample, seed=7)
    whole_model, X, y = _problem()
    whole = fit(whole_model, X, y, max_iter=6, **kw)
    ckpt = Checkpoint(tmp_path / "checkpoint.pt", every_s=1e-9)  # due after every global iteration
    first_model, _, _ = _problem()
    cut = fit(first_model, X, y, max_iter=3, checkpoint=ckpt, **kw)  # saves after iterations 1 and 2
    saved = torch.load(ckpt.path, weights_only=False)
    assert cut.iterations == 3 and saved["iterations"] == 2 and saved["progress"] == pytest.approx(2 / 3)
    resumed_model, _, _ = _problem()
    resumed = fit(resumed_model, X, y, max_iter=6, checkpoint=ckpt, **kw)
    assert resumed.iterations == whole.iterations == 6
    assert [r["elbo"] for r in resumed.curve] == [r["elbo"] for r in whole.curve]
    assert resumed.final_elbo == whole.final_elbo
    for (name, a), b in zip(whole_model.state_dict().items(), resumed_model.state_dict().values()):
        assert torch.equal(a, b), name
    # the curve's times continue the interrupted fit's clock instead of restarting at 0
    assert resumed.curve[3]["wall_s"] >= resumed.curve[2]["wall_s"]
