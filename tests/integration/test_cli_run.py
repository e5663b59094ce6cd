"""`dlm-bench run` end to end in a subprocess, and its one-line errors."""

import csv
import json
import math
import subprocess

import pytest

from tests.helpers import cli_command

CONTRACT_TOP = {
    "schema", "status", "error", "paper", "experiment", "dataset", "task", "model", "objective", "estimator",
    "likelihood", "beta", "seed", "split", "train_size", "num_inducing", "hyperparameters", "method", "metrics", "train",
    "config", "env", "label_map",
}
CONTRACT_TRAIN = {"iterations", "epochs", "converged", "wall_s", "final_loss", "device", "dtype", "tol_on", "threads", "stopped"}
CONTRACT_ENV = {"dlm_bench", "torch", "gpytorch", "python", "git", "host", "gpu", "speed_probe_s"}


def run_cli(args, env, timeout=300):
    return subprocess.run(cli_command() + args, capture_output=True, text=True, env=env, timeout=timeout)


def test_run_writes_the_results_contract(tmp_path, cli_env):
    proc = run_cli(
        ["run", f"results_dir={tmp_path}", "objective=dlm", "objective.beta=0.5", "trainer.max_iters=150", "seed=3"],
        cli_env,
    )
    assert proc.returncode == 0, proc.stderr
    summary = proc.stdout.strip().splitlines()
    assert len(summary) == 1 and summary[0].startswith("boston svgp dlm beta=0.5 test_nll=")
    run_dirs = list(tmp_path.glob("default/*/run.json"))
    assert len(run_dirs) == 1
    rec = json.loads(run_dirs[0].read_text())
    assert set(rec) == CONTRACT_TOP
    assert set(rec["train"]) - {"at_bound"} == CONTRACT_TRAIN and set(rec["env"]) == CONTRACT_ENV and rec["env"]["speed_probe_s"] > 0
    assert rec["schema"] == 1 and rec["status"] == "ok" and rec["error"] is None
    assert (rec["dataset"], rec["model"], rec["objective"], rec["beta"], rec["seed"]) == ("boston", "svgp", "dlm", 0.5, 3)
    assert rec["train_size"] == round(0.67 * 506) and rec["num_inducing"] == 50
    for key in ("test_nll", "test_mse", "val_nll", "val_mse", "test_nll_raw", "test_mse_raw", "noise_var"):
        assert math.isfinite(rec["metrics"][key]), key
    assert rec["train"]["iterations"] == 150 and rec["config"]["objective"]["beta"] == 0.5
    assert rec["method"] == "svgp-dlm" and rec["paper"] == "dlm" and rec["train"]["threads"] >= 1
    with open(run_dirs[0].parent / "curve.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 150 and set(rows[0]) == {"iteration", "wall_s", "loss"}
    assert float(rows[-1]["loss"]) == pytest.approx(rec["train"]["final_loss"])


@pytest.mark.parametrize(
    "override,needle",
    [
        ("model.kernel=cubic", "Invalid value 'cubic', expected one of [rbf, matern]"),
        ("objective.beta=0", "objective.beta must be a finite number > 0"),
    ],
)
def test_config_errors_are_one_line_exit_2(override, needle, tmp_path, cli_env):
    """In a real process (Hydra's logging and warnings go to the process's stderr): an error Hydra's schema raises
    and one dlm-bench's validation raises, each one line. The other origins (unknown groups, options and keys) are
    rows of test_hostile_inputs.py's table, run in-process."""
    proc = run_cli(["run", f"results_dir={tmp_path}", override], cli_env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list(tmp_path.iterdir())


def test_a_closed_stdout_is_a_quiet_exit_not_an_internal_error(cli_env):
    """`dlm-bench ... | head -1`: the reader closes the pipe before the output is written; the tool exits 141 (a
    SIGPIPE'd tool's status) without printing 'internal error' (it did before)."""
    proc = subprocess.Popen(cli_command() + ["datasets"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env)
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err
    assert b"internal error" not in err and b"Traceback" not in err, err
