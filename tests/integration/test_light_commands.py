"""Light commands stay light (issue 75): help, the listings and shell completion import neither torch, gpytorch nor
hydra (composition is sweeps/compose.py's, imported when a command runs: issue 72); a refused command line composes
(hydra) but imports neither torch nor gpytorch.
Each runs in its own interpreter under `python -X importtime`, whose stderr lists every module imported, in the
order imported, as it happens (completion ends with os._exit, after which nothing could be asked). CPU time is
measured by `make bench`, not here."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

HEAVY = ("torch", "gpytorch", "hydra")
COMMANDS = [["--help"], ["run", "--help"], ["sweep", "--help"], ["fetch", "--help"], ["report", "--help"],
            ["datasets"], ["experiments"]]


def imported(stderr: str) -> set[str]:
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", stderr, re.M))


def run_light(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "dlm_bench.cli", *args], capture_output=True,
                          text=True, env=env, timeout=120)


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_light_command_imports_no_torch(args, cli_env, tmp_path):
    cli_env["DLM_BENCH_DATA"] = str(tmp_path / "cache")  # `datasets` reads the cache: an empty one here
    proc = run_light(args, cli_env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = imported(proc.stderr)
    assert "dlm_bench" in modules  # importtime reported
    assert not modules & set(HEAVY), f"dlm-bench {' '.join(args)} imported {sorted(modules & set(HEAVY))}"
    assert proc.stdout.strip()


def test_completion_imports_no_torch_and_completes(cli_env, tmp_path):
    out = tmp_path / "completions"
    line = "dlm-bench run model=s"
    cli_env.update({"_ARGCOMPLETE": "1", "COMP_LINE": line, "COMP_POINT": str(len(line)),
                    "_ARGCOMPLETE_STDOUT_FILENAME": str(out)})
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dlm_bench.cli"], capture_output=True,
                          text=True, env=cli_env, timeout=120)
    completions = set(re.split(r"[\x0b\s]+", out.read_text().strip()))
    assert {"model=sgpr", "model=svgp", "model=savigp", "model=sggpm"} <= completions, (completions, proc.stderr[-500:])
    assert not imported(proc.stderr) & set(HEAVY)


def test_importtime_parsing_sees_torch_when_it_is_imported(cli_env):
    """The check above can fail: the same parsing finds torch in a command that needs it."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import dlm_bench.models.plugin"],
                          capture_output=True, text=True, env=cli_env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {"torch", "gpytorch"} <= imported(proc.stderr)


REFUSED = [(["run", "objective.beta=0"], "objective.beta must be a finite number > 0"),
           (["sweep", "seed=0,1", "objective.bta=1"], "objective.bta"),
           (["sweep", "experiment=nope"], "unknown experiment 'nope'")]


@pytest.mark.parametrize("args, words", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_a_refused_command_line_is_said_before_torch_loads(args, words, cli_env, tmp_path):
    """A mistyped value or key is one line and exit 2 from the composed config alone: torch and gpytorch (~3 s) are
    imported only once the command line is good (sweeps/commands.py)."""
    proc = run_light([*args, f"results_dir={tmp_path}"], cli_env)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr[-2000:]
    assert not imported(proc.stderr) & {"torch", "gpytorch"}
