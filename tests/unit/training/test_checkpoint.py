"""Training checkpoints (dlm_bench/training/checkpoint.py): a fit stopped by SIGTERM part-way, then fitted again from
scratch with the same checkpoint file, ends bit for bit where the uninterrupted fit ends (the reference is that
uninterrupted fit: same seed, same code, no checkpoint). The loss draws from torch's, numpy's and Python's global
RNGs and the minibatch generator, so a resume that did not restore any of them would differ."""

import os
import random
import signal

import numpy as np
import pytest
import torch

from dlm_bench.errors import Terminated
from dlm_bench.results.checkpoint_files import remove_checkpoints
from dlm_bench.run import signals
from dlm_bench.training.checkpoint import Checkpoint
from dlm_bench.training.trainer import Trainer


class NoisyRegression(torch.nn.Module):
    """A linear model whose loss is perturbed by draws from every global RNG (as bMC sampling or a random init
    would draw), with a buffer that changes on the first call (as GPyTorch's variational_params_initialized)."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.w = torch.nn.Parameter(torch.randn(3, generator=g, dtype=torch.float64))
        self.register_buffer("initialized", torch.tensor(0))
        self.sigterm_at = None  # call number at which the loss sends this process SIGTERM (mid-iteration)
        self.calls = 0

    def loss(self, X, y):
        self.calls += 1
        if self.calls == self.sigterm_at:
            os.kill(os.getpid(), signal.SIGTERM)  # arrives inside the step: the checkpoint must wait for its end
        if not bool(self.initialized):
            with torch.no_grad():
                self.w.mul_(0.5)
            self.initialized.fill_(1)
        noise = torch.randn(3, dtype=torch.float64) * 0.01 + float(np.random.normal()) * 1e-3 + random.random() * 1e-3
        return ((X @ (self.w + noise) - y) ** 2).mean()


def data():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(40, 3, generator=g, dtype=torch.float64)
    return X, X @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + 0.1 * torch.randn(40, generator=g,
                                                                                           dtype=torch.float64)


def fit(tmp_path, sigterm_at=None, checkpoint=True, **kw):
    """A fresh process-like start (seeded, model built), then Trainer.fit with the run's checkpoint file."""
    torch.manual_seed(0), np.random.seed(0), random.seed(0)
    model = NoisyRegression()
    model.sigterm_at = sigterm_at
    trainer = Trainer(lr=0.05, max_iters=120, window=10, tol=-1.0, progress=False, seed=3, checkpoint_every_s=1e9, **kw)
    if checkpoint:
        trainer.checkpoint_to(tmp_path / "checkpoint.pt")
    X, y = data()
    return trainer.fit(model.loss, model.parameters(), X, y, module=model), model


@pytest.mark.parametrize("kw", [{}, {"batch_size": 16}, {"optimizer": "lbfgs"}], ids=["adam", "minibatch", "lbfgs"])
def test_sigterm_then_rerun_equals_uninterrupted(tmp_path, sigterm_handler, kw):
    ref, ref_model = fit(tmp_path / "ref", checkpoint=False, **kw)
    # SIGTERM lands inside the 37th loss evaluation: the loop finishes that step, saves, then raises Terminated
    with pytest.raises(Terminated):
        fit(tmp_path, sigterm_at=37, **kw)
    assert (tmp_path / "checkpoint.pt").exists()
    saved = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    # saved at the end of the iteration the signal hit: the 37th (Adam), the end of its epoch (minibatches of
    # 16 of 40: iteration 39), or an earlier one (L-BFGS evaluates the loss several times per iteration)
    expected = {"adam": [37], "minibatch": [39]}.get(kw.get("optimizer") or ("minibatch" if kw else "adam"),
                                                       range(1, 37))
    assert saved["result"]["iterations"] in expected
    again, model = fit(tmp_path, **kw)
    assert again.resumed_at == [saved["result"]["iterations"]]
    assert torch.equal(model.w, ref_model.w)  # bit for bit
    strip = [{k: v for k, v in r.items() if k != "wall_s"} for r in ref.curve]
    assert [{k: v for k, v in r.items() if k != "wall_s"} for r in again.curve] == strip
    assert (again.iterations, again.epochs, again.final_loss) == (ref.iterations, ref.epochs, ref.final_loss)


def test_a_rerun_without_the_rng_states_would_differ(tmp_path, sigterm_handler):
    """The test above can fail: resuming with the RNG states of a fresh start gives another trajectory."""
    ref, ref_model = fit(tmp_path / "ref", checkpoint=False)
    with pytest.raises(Terminated):
        fit(tmp_path, sigterm_at=37)
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    torch.manual_seed(0), np.random.seed(0), random.seed(0)
    from dlm_bench.training.checkpoint import rng_state
    state["rng"] = rng_state()
    Checkpoint(tmp_path / "checkpoint.pt", 1).save({k: v for k, v in state.items() if k not in ("format", "identity", "progress")},
                                                   state["progress"])
    _, model = fit(tmp_path)
    assert not torch.equal(model.w, ref_model.w)


def test_stopping_window_is_part_of_the_state(tmp_path, sigterm_handler):
    """With the stopping rule on, a resumed fit stops at the same iteration as the uninterrupted one."""
    def run(**kw):
        torch.manual_seed(0), np.random.seed(0), random.seed(0)
        model = NoisyRegression()
        model.sigterm_at = kw.pop("sigterm_at", None)
        trainer = Trainer(lr=0.05, max_iters=2000, window=30, tol=2e-2, progress=False, checkpoint_every_s=1e9)
        if kw.get("checkpoint", True):
            trainer.checkpoint_to(tmp_path / "checkpoint.pt")
        return trainer.fit(model.loss, model.parameters(), *data(), module=model)

    ref = run(checkpoint=False)
    assert ref.converged and 40 < ref.iterations < 2000
    with pytest.raises(Terminated):
        run(sigterm_at=ref.iterations - 5)  # inside the window that converges
    again = run()
    assert (again.converged, again.iterations, again.final_loss) == (True, ref.iterations, ref.final_loss)


def test_periodic_checkpoint_survives_a_kill_at_any_point(tmp_path):
    """SIGKILL gives no warning: the last periodic checkpoint (every_s tiny: every iteration) is resumed."""
    ref, ref_model = fit(tmp_path / "ref", checkpoint=False)
    torch.manual_seed(0), np.random.seed(0), random.seed(0)
    model = NoisyRegression()
    trainer = Trainer(lr=0.05, max_iters=120, window=10, tol=-1.0, progress=False, seed=3, checkpoint_every_s=1e-9)
    trainer.checkpoint_to(tmp_path / "checkpoint.pt")
    saves = []
    real_save = Checkpoint.save

    def save_then_die(self, state, progress):  # the process dies right after its 50th save
        real_save(self, state, progress)
        saves.append(state["result"]["iterations"])
        if len(saves) == 50:
            raise SystemExit("killed")

    Checkpoint.save = save_then_die
    try:
        with pytest.raises(SystemExit):
            trainer.fit(model.loss, model.parameters(), *data(), module=model)
    finally:
        Checkpoint.save = real_save
    assert saves[-1] == 50
    from dlm_bench.sweeps.cost_estimate import checkpoint_progress  # what --estimate reads: 50 of 120 iterations
    assert checkpoint_progress(tmp_path) == pytest.approx(50 / 120)
    again, model = fit(tmp_path)
    assert again.resumed_at == [50] and torch.equal(model.w, ref_model.w)


def test_save_is_atomic_and_a_bad_file_is_ignored(tmp_path, monkeypatch, capsys):
    ckpt = Checkpoint(tmp_path / "checkpoint.pt", 1.0)
    ckpt.save({"x": torch.arange(3)}, 0.1)

    def torn(obj, fh):  # the disk fills half-way through the new checkpoint
        fh.write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", torn)
    with pytest.raises(OSError):
        ckpt.save({"x": torch.arange(5)}, 0.2)
    monkeypatch.undo()
    assert torch.equal(ckpt.load()["x"], torch.arange(3))  # the old checkpoint, whole
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]  # no temporary file left
    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint")
    assert ckpt.load() is None
    assert "it does not load (" in capsys.readouterr().err
    other = Checkpoint(tmp_path / "c2.pt", 1.0, identity={"members": [0, 2]})
    other.save({"x": 1}, 0.0)
    assert Checkpoint(tmp_path / "c2.pt", 1.0, identity={"members": [2]}).load() is None


def test_off_means_no_file_and_signals_act_at_once(tmp_path, sigterm_handler):
    torch.manual_seed(0)
    model = NoisyRegression()
    trainer = Trainer(lr=0.05, max_iters=30, tol=-1.0, progress=False, checkpoint_every_s=0)
    trainer.checkpoint_to(tmp_path / "checkpoint.pt")
    trainer.fit(model.loss, model.parameters(), *data(), module=model)
    assert not (tmp_path / "checkpoint.pt").exists()
    model.sigterm_at, model.calls = 5, 0
    with pytest.raises(Terminated):
        trainer.fit(model.loss, model.parameters(), *data(), module=model)
    assert model.calls == 5 and not (tmp_path / "checkpoint.pt").exists()  # raised inside the 5th loss
    with pytest.raises(ValueError, match="checkpoint_every_s"):
        Trainer(checkpoint_every_s=-1)


def test_remove_checkpoints(tmp_path):
    for name in ("checkpoint.pt", "checkpoint-stage1.pt", ".checkpoint.abc.tmp", "run.json"):
        (tmp_path / name).write_text("x")
    remove_checkpoints(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_slurm_warning_checkpoints_before_submitits_requeue(tmp_path):
    """In a SLURM job submitit handles USR2 (checkpoint the submission, `scontrol requeue`, sys.exit). The harness
    (signals.install) holds that handler while a training iteration runs: the run's checkpoint is written first,
    of the state at the end of the iteration the warning hit, then submitit's handler runs."""
    seen = []

    def submitit_handler(signum, frame):  # what submitit's SignalHandler.checkpoint_and_try_requeue ends with
        saved = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
        seen.append((signum, saved["result"]["iterations"]))
        raise SystemExit(-1)

    before = signal.signal(signal.SIGUSR2, submitit_handler)
    previous = signals.install()
    try:
        assert signal.getsignal(signal.SIGUSR2) is not submitit_handler  # wrapped
        ref, ref_model = fit(tmp_path / "ref", checkpoint=False)
        torch.manual_seed(0), np.random.seed(0), random.seed(0)
        model = NoisyRegression()
        trainer = Trainer(lr=0.05, max_iters=120, window=10, tol=-1.0, progress=False, seed=3, checkpoint_every_s=1e9)
        trainer.checkpoint_to(tmp_path / "checkpoint.pt")
        real_loss = model.loss

        def loss(X, y):
            if model.calls == 20:  # the 21st evaluation: the warning arrives mid-iteration
                os.kill(os.getpid(), signal.SIGUSR2)
            return real_loss(X, y)

        with pytest.raises(SystemExit):
            trainer.fit(loss, model.parameters(), *data(), module=model)
        assert seen == [(signal.SIGUSR2, 21)]
    finally:
        signals.restore(previous)
        restored = signal.getsignal(signal.SIGUSR2)
        signal.signal(signal.SIGUSR2, before)
        signals.reset()
    assert restored is submitit_handler  # signals.restore puts submitit's handler back
    again, model = fit(tmp_path)  # the requeued job
    assert again.resumed_at == [21] and torch.equal(model.w, ref_model.w)


def test_a_job_out_of_requeues_stops_like_sigterm_not_as_a_failed_run(tmp_path):
    """submitit raises UncompletedJobError from its handler when it does not requeue (max_num_timeout reached):
    that must not become a failed run (the harness records Exceptions as failures and removes the checkpoint),
    but stop the run like SIGTERM, the checkpoint kept, so the next sweep resumes it."""
    from submitit.core.utils import UncompletedJobError

    from dlm_bench.errors import OutOfRequeues

    def submitit_handler(signum, frame):
        raise UncompletedJobError("Job not requeued because: timed-out too many times.")

    before = signal.signal(signal.SIGUSR2, submitit_handler)
    previous = signals.install()
    try:
        torch.manual_seed(0), np.random.seed(0), random.seed(0)
        model = NoisyRegression()
        trainer = Trainer(lr=0.05, max_iters=120, tol=-1.0, progress=False, checkpoint_every_s=1e9)
        trainer.checkpoint_to(tmp_path / "checkpoint.pt")
        real_loss = model.loss

        def loss(X, y):
            if model.calls == 10:
                os.kill(os.getpid(), signal.SIGUSR2)
            return real_loss(X, y)

        with pytest.raises(OutOfRequeues, match="timed-out too many times.*next sweep resumes it"):
            trainer.fit(loss, model.parameters(), *data(), module=model)
        assert not isinstance(OutOfRequeues("x"), Exception)  # passes the harness's `except Exception`
    finally:
        signals.restore(previous)
        signal.signal(signal.SIGUSR2, before)
        signals.reset()
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=False)["result"]["iterations"] == 11


def test_progress_is_the_further_of_the_two_caps():
    """A checkpoint's `progress` (what --estimate reads) is iterations / max_iters, or epochs / epochs where that is
    further: a minibatch run stops at whichever cap it reaches first."""
    from dlm_bench.training.trainer import TrainResult

    def progress(max_iters, epochs, iterations, done_epochs):
        r = TrainResult()
        r.iterations, r.epochs = iterations, done_epochs
        return Trainer(max_iters=max_iters, epochs=epochs, progress=False)._progress(r)

    assert progress(200, None, 50, 0) == pytest.approx(0.25)
    assert progress(100, 4, 30, 2) == pytest.approx(0.5)
    assert progress(100, 4, 80, 1) == pytest.approx(0.8)
