"""Trainer: the papers' stopping rule, max_iters, minibatches, the NaN guard."""

import math

import numpy as np
import pytest
import torch

from dlm_bench.training.trainer import StoppingRule, Trainer


def first_window_hit(losses, window, tol):
    """Independent re-statement of the rule: first t (1-based) with max-min of losses[t-window:t] <= tol."""
    for t in range(window, len(losses) + 1):
        w = losses[t - window : t]
        if max(w) - min(w) <= tol:
            return t
    return None


def test_stopping_rule_on_a_scripted_sequence():
    seq = [5.0, 4.0, 3.0, 2.9, 2.95, 2.91, 2.92, 2.9]
    rule = StoppingRule(window=3, tol=0.051)
    hits = [rule.update(v) for v in seq]
    # window ranges: 2, 1.1, 0.1, then (2.9,2.95,2.91) -> 0.05 <= 0.051: first hit at t=6
    assert hits.index(True) + 1 == 6 == first_window_hit(seq, 3, 0.051)
    assert not any(hits[:5])


class QuadraticMLL(torch.nn.Module):
    """loss = sum_j a_j (p_j - c_j)^2 (+ scripted values at given calls)."""

    def __init__(self, dim=3, script=None):
        super().__init__()
        self.p = torch.nn.Parameter(torch.zeros(dim, dtype=torch.float64))
        self.c = torch.linspace(1.0, 2.0, dim, dtype=torch.float64)
        self.a = torch.linspace(0.5, 1.5, dim, dtype=torch.float64)
        self.script = script or {}
        self.calls = 0

    def loss(self, xb, yb):
        self.calls += 1
        value = (self.a * (self.p - self.c) ** 2).sum()
        if self.calls in self.script:
            value = value + self.script[self.calls]
        return value

    def args(self):
        return self.loss, self.parameters()


@pytest.mark.parametrize("window,tol", [(50, 1e-4), (10, 1e-3), (1, 10.0)])
def test_trainer_stops_exactly_when_the_window_criterion_first_holds(window, tol):
    X = torch.zeros(20, 1, dtype=torch.float64)
    y = torch.zeros(20, dtype=torch.float64)
    mll = QuadraticMLL()
    result = Trainer(lr=0.05, max_iters=20000, window=window, tol=tol, progress=False).fit(mll.loss, mll.parameters(), X, y)
    losses = [row["loss"] for row in result.curve]
    assert result.converged and result.status == "ok"
    assert result.iterations == len(losses) == first_window_hit(losses, window, tol)
    assert result.final_loss == losses[-1]


@pytest.mark.parametrize("tol_on,window,tol", [("mean", 50, 1e-4), ("sum", 20, 1e-3), ("mean", 10, 1e-3)])
def test_a_stop_replayed_on_a_never_stopping_run_is_the_early_stop(tol_on, window, tol):
    """StoppingRule.first_stop on the curve of a run with tol < 0 (never stops) finds the iteration, loss and
    parameters at which the same rule stops a fresh run: the premise of scripts/replay_stopping_rule.py."""
    X, y = torch.zeros(20, 1, dtype=torch.float64), torch.zeros(20, dtype=torch.float64)
    early_mll, long_mll = QuadraticMLL(), QuadraticMLL()
    kw = dict(lr=0.05, window=window, tol_on=tol_on, progress=False)
    early = Trainer(max_iters=20000, tol=tol, **kw).fit(early_mll.loss, early_mll.parameters(), X, y)
    long_result = Trainer(max_iters=early.iterations + 300, tol=-1.0, **kw).fit(long_mll.loss, long_mll.parameters(), X, y)
    assert early.converged and not long_result.converged
    scale = 20.0 if tol_on == "sum" else 1.0
    stop = StoppingRule(window, tol).first_stop([row["loss"] * scale for row in long_result.curve])
    assert stop == early.iterations
    assert long_result.curve[stop - 1]["loss"] == early.final_loss
    assert first_window_hit([r["loss"] * scale for r in long_result.curve], window, tol) == stop


def test_trainer_respects_max_iters():
    X, y = torch.zeros(5, 1, dtype=torch.float64), torch.zeros(5, dtype=torch.float64)
    result = Trainer(lr=1e-4, max_iters=37, window=50, tol=1e-12, progress=False).fit(*QuadraticMLL().args(), X, y)
    assert result.iterations == 37 and not result.converged and result.status == "ok"
    assert first_window_hit([r["loss"] for r in result.curve], 50, 1e-12) is None


def test_minibatch_epochs_and_iteration_count():
    X, y = torch.zeros(103, 1, dtype=torch.float64), torch.zeros(103, dtype=torch.float64)
    result = Trainer(lr=1e-3, max_iters=10**6, batch_size=10, epochs=4, window=50, tol=0.0, progress=False).fit(
        *QuadraticMLL().args(), X, y
    )
    assert result.epochs == 4
    assert result.iterations == 4 * math.ceil(103 / 10)


def test_nan_guard_stops_and_reports_diverged():
    X, y = torch.zeros(5, 1, dtype=torch.float64), torch.zeros(5, dtype=torch.float64)
    mll = QuadraticMLL(script={17: float("nan")})
    before = mll.p.detach().clone()
    result = Trainer(lr=0.01, max_iters=100, progress=False).fit(mll.loss, mll.parameters(), X, y)
    assert result.status == "diverged" and "iteration 17" in result.error
    assert result.iterations == 17 and len(result.curve) == 16
    assert not np.array_equal(before.numpy(), mll.p.detach().numpy())
    assert torch.isfinite(mll.p).all()  # the NaN step was never applied


class StepClock:
    """A clock that advances `step` seconds per reading (the Heartbeat reads it once per tick, once at start)."""

    def __init__(self, step: float):
        self.t, self.step = 0.0, step

    def __call__(self):
        self.t += self.step
        return self.t


def test_heartbeat_prints_a_line_each_time_the_interval_has_passed(capsys):
    """trainer.progress=lines: with 1 s per iteration and every_s = 10, lines at iterations 10, 20, 30 (iteration k
    is read at clock time k + 1 after a start at 1): exactly floor(35 / 10) lines over 35 iterations."""
    X, y = torch.zeros(5, 1, dtype=torch.float64), torch.zeros(5, dtype=torch.float64)
    from dlm_bench.util.logline import Heartbeat

    trainer = Trainer(lr=1e-4, max_iters=35, window=50, tol=1e-12, progress=False,
                      heartbeat=Heartbeat(10.0, clock=StepClock(1.0)))
    result = trainer.fit(*QuadraticMLL().args(), X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "still training" in ln]
    assert [ln.split("iteration ")[1].split("/")[0] for ln in lines] == ["10", "20", "30"]
    losses = {row["iteration"]: row["loss"] for row in result.curve}
    first = lines[0]
    assert first.startswith("[dlm-bench] still training: iteration 10/35, loss ") and first.endswith(", 0.2 min")
    assert float(first.split("loss ")[1].split(",")[0]) == pytest.approx(losses[10], rel=1e-5)


def test_no_heartbeat_lines_without_progress_lines(capsys, monkeypatch):
    """progress off / on / auto: no heartbeat; lines: one from DLM_BENCH_HEARTBEAT_S (a bad value: a one-line error)."""
    from omegaconf import OmegaConf

    from dlm_bench.config.schema import Progress
    from dlm_bench.util.logline import HEARTBEAT_ENV

    def trainer_for(mode):
        cfg = OmegaConf.create({"lr": 0.1, "max_iters": 3, "window": 50, "tol": 1e-4, "batch_size": None,
                                "epochs": None, "optimizer": "adam", "progress": Progress(mode)})
        return Trainer.from_config(cfg)

    monkeypatch.setenv(HEARTBEAT_ENV, "0.5")
    for mode in ("off", "on", "auto"):
        assert trainer_for(mode).heartbeat is None
    assert trainer_for("lines").heartbeat.every_s == 0.5
    monkeypatch.setenv(HEARTBEAT_ENV, "soon")
    with pytest.raises(ValueError, match=f"^{HEARTBEAT_ENV} must be a number of seconds > 0, got 'soon'$"):
        trainer_for("lines")
    X, y = torch.zeros(5, 1, dtype=torch.float64), torch.zeros(5, dtype=torch.float64)
    Trainer(lr=1e-4, max_iters=50, progress=False).fit(*QuadraticMLL().args(), X, y)
    assert "still training" not in capsys.readouterr().out
