"""Runs that survive interruption (training/checkpoint.py): a run or batched beta group stopped part-way by SIGTERM
or SIGKILL, then run again, writes the run.json metrics and curve.csv (all but the wall-clock column) of the
uninterrupted run, exactly (fixed seed, CPU, float64). The reference is the same command run without interruption.

Fast (default suite): a batched group in this process, SIGTERM raised inside a training step. Slow: `dlm-bench`
subprocesses killed from outside (SIGKILL, SIGTERM), single runs and a batched group."""

import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from dlm_bench.errors import Terminated
from dlm_bench.run import execute, signals
from dlm_bench.sweeps.compose import compose_config
from tests.helpers import cli_command

TINY = ["dataset=boston", "model.num_inducing=10", "dtype=float64", "device=cpu", "trainer.progress=off"]


def results(root: Path) -> dict:
    """{run name: (run.json, curve rows without wall_s)} under root."""
    out = {}
    for p in sorted(root.glob("*/*/run.json")):
        rows = [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader((p.parent / "curve.csv").open())]
        out[p.parent.name] = (json.loads(p.read_text()), rows)
    return out


def assert_same_results(ref: dict, got: dict, resumed: bool = True) -> None:
    assert ref and set(ref) == set(got)
    for name, (ra, ca) in ref.items():
        rb, cb = got[name]
        assert rb["status"] == ra["status"] == "ok", name
        assert rb["metrics"] == ra["metrics"], name  # exactly: every digit
        assert cb == ca, name
        for key in ("iterations", "converged", "final_loss"):
            assert rb["train"][key] == ra["train"][key], (name, key)
        assert "resumed_at" not in ra["train"]
        if resumed:
            assert rb["train"]["resumed_at"], name
    leftovers = [p for p in Path(next(iter(got.values()))[0]["config"]["results_dir"]).rglob("*checkpoint*")]
    assert leftovers == []  # removed once run.json is written


# --------------------------------------------------------------------------------- in-process (fast)

GROUP = TINY + ["method=dlm", "objective.beta_index=0", "objective.beta_batch=true", "objective.min_beta=40",
                "trainer.max_iters=120", "trainer.window=15", "trainer.tol=2e-3", "trainer.checkpoint_every_s=1e9"]


def test_sigterm_inside_a_batched_step_then_rerun_equals_uninterrupted(tmp_path, monkeypatch, sigterm_handler):
    """The whole grid of boston down to beta 40 (4 betas) in one batch; members stop at different iterations (the
    batch shrinks), SIGTERM arrives inside the 95th batched loss (two members have
    stopped by then: their final states are part of the checkpoint): the group checkpoints at the end of that
    iteration and stops; the rerun resumes there and writes every member as the uninterrupted group does."""
    from dlm_bench.models.batched_svgp import BatchedBundle

    execute(compose_config(GROUP + [f"results_dir={tmp_path / 'ref'}"]))
    ref = results(tmp_path / "ref")
    iters = sorted({r["train"]["iterations"] for r, _ in ref.values()})
    assert len(ref) == 4 and len(iters) > 1 and iters[1] < 95 < iters[2], iters  # two stop before, two after

    calls = []
    real_loss = BatchedBundle.loss

    def loss(self, X, y):
        calls.append(1)
        if len(calls) == 95:
            os.kill(os.getpid(), signal.SIGTERM)
        return real_loss(self, X, y)

    monkeypatch.setattr(BatchedBundle, "loss", loss)
    cfg = compose_config(GROUP + [f"results_dir={tmp_path / 'cut'}"])
    with pytest.raises(Terminated):
        execute(cfg)
    saved = list((tmp_path / "cut").rglob("checkpoint-*.pt"))
    assert len(saved) == 1 and not list((tmp_path / "cut").rglob("run.json"))
    monkeypatch.setattr(BatchedBundle, "loss", real_loss)
    signals.reset()
    execute(compose_config(GROUP + [f"results_dir={tmp_path / 'cut'}"]))
    got = results(tmp_path / "cut")
    assert_same_results({k: v for k, v in ref.items() if v[0]["train"]["iterations"] > 95}, {
        k: v for k, v in got.items() if v[0]["train"]["iterations"] > 95})
    assert_same_results(ref, got, resumed=False)  # members stopped before the signal: same, not resumed
    assert {r["train"]["resumed_at"][0] for r, _ in got.values() if "resumed_at" in r["train"]} == {95}


def test_checkpoint_interval_is_not_in_run_names():
    from dlm_bench.run import run_name

    a = compose_config(["method=dlm"])
    b = compose_config(["method=dlm", "trainer.checkpoint_every_s=5"])
    assert run_name(a) == run_name(b)


def test_bad_interval_is_one_line_exit_2(tmp_path):
    proc = subprocess.run(cli_command() + ["run", "trainer.checkpoint_every_s=-1", f"results_dir={tmp_path}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "dlm-bench: error: trainer.checkpoint_every_s must be a finite number >= 0 (0: no checkpoints), got -1.0"]


# --------------------------------------------------------------------------------- subprocesses (slow)


def _run(args, env):
    return subprocess.run(cli_command() + args, capture_output=True, text=True, env=env, timeout=900)


def _interrupted(args, env, root: Path, sig: int, after_s: float = 2.0) -> None:
    """Start `dlm-bench args`, wait for its first checkpoint, let it train `after_s` more, send `sig`."""
    proc = subprocess.Popen(cli_command() + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 600
    while not list(root.rglob("checkpoint*.pt")):
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(after_s)
    assert proc.poll() is None, "finished before the signal: make the run longer"
    proc.send_signal(sig)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == (-9 if sig == signal.SIGKILL else 143), out
    assert not list(root.rglob("run.json")), out
    assert list(root.rglob("checkpoint*.pt")), out


SINGLE = TINY + ["objective=dlm", "trainer.max_iters=400", "trainer.tol=-1", "trainer.checkpoint_every_s=0.2"]
SWEEP_GROUP = TINY + ["method=dlm", "objective.beta_index=0,2,5", "objective.beta_batch=true", "launcher=local",
                      "trainer.max_iters=400", "trainer.tol=-1", "trainer.checkpoint_every_s=0.2"]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
@pytest.mark.parametrize("kind", ["single", "batched"])
def test_killed_process_rerun_equals_uninterrupted(tmp_path, cli_env, sig, kind):
    env = {**cli_env, "OMP_NUM_THREADS": "1"}
    cmd, args = ("run", SINGLE) if kind == "single" else ("sweep", SWEEP_GROUP)
    ref = _run([cmd, *args, f"results_dir={tmp_path / 'ref'}"], env)
    assert ref.returncode == 0, ref.stdout + ref.stderr
    _interrupted([cmd, *args, f"results_dir={tmp_path / 'cut'}"], env, tmp_path / "cut", sig)
    again = _run([cmd, *args, f"results_dir={tmp_path / 'cut'}"], env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert_same_results(results(tmp_path / "ref"), results(tmp_path / "cut"))
