"""Every script in scripts/ runs in a test (issue 75: "if a user can type it, a test runs it").

- every `from X import name` in a script, at any depth (imports inside functions included: bench_savigp.py's
  `from dlm_bench.sweeps.preflight import availability` broke `make bench` after the function moved, while `--help`
  passed), names something that exists;
- every Python script answers `--help` (run as __main__, in process);
- every bench runs at its `--smoke` size and returns finite positive timings;
- the small generators and checks run at a tiny size; a script without its data prints one line and exits 2
  (grad_bias.py, through `make grad-bias` in test_make_targets.py).
"""

from __future__ import annotations

import ast
import importlib
import json
import math
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts"
PY_SCRIPTS = sorted(p.name for p in SCRIPTS.glob("*.py"))
SIBLINGS = {p[:-3] for p in PY_SCRIPTS}
LIBRARIES = {"benchkit.py", "entry.py"}  # imported by the scripts, not run


@pytest.fixture
def scripts_path(monkeypatch):
    """scripts/ on sys.path, as `python scripts/X.py` has it; sibling modules forgotten afterwards."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name in SIBLINGS:
            del sys.modules[name]


def imported_names(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of every `from module import name` in the file, at any depth ('' for `import module`)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += [(node.module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [(alias.name, "", node.lineno) for alias in node.names]
    return out


def top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


@pytest.mark.parametrize("script", PY_SCRIPTS)
def test_every_imported_name_exists(script):
    """Each `from dlm_bench... import x` (and each sibling-script import) at any depth names something that exists."""
    missing = []
    for module, name, line in imported_names(SCRIPTS / script):
        if module in SIBLINGS:
            if name and name not in top_level_names(SCRIPTS / f"{module}.py"):
                missing.append(f"line {line}: {module}.{name}")
            continue
        if not module.startswith("dlm_bench"):
            continue
        try:
            mod = importlib.import_module(module)
        except ImportError as err:
            missing.append(f"line {line}: {module} ({err})")
            continue
        if name and not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"line {line}: from {module} import {name}")
    assert not missing, f"{script} imports what does not exist: {missing}"


def test_the_moved_function_would_be_caught(tmp_path):
    """The check above fails on the exact import that broke `make bench` (sweeps.preflight has no availability)."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from dlm_bench.sweeps.preflight import availability\n")
    (module, name, _), = imported_names(bad)
    assert not hasattr(importlib.import_module(module), name)


@pytest.mark.parametrize("script", sorted(set(PY_SCRIPTS) - LIBRARIES))
def test_help(script, scripts_path, monkeypatch, capsys):
    """`python scripts/X.py --help` prints a usage and exits 0 (run as __main__, in this process)."""
    monkeypatch.setattr(sys, "argv", [str(SCRIPTS / script), "--help"])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(SCRIPTS / script), run_name="__main__")
    assert exc.value.code in (0, None)
    assert "usage:" in capsys.readouterr().out


BENCHES = sorted(s[:-3] for s in PY_SCRIPTS if s.startswith("bench_") and s != "bench_peers.py")
SLOW_BENCHES = {"bench_threads": "two `dlm-bench run` processes", "bench_device": "MNIST-wide SAVIGP step"}


def positive_numbers(value) -> list[float]:
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in positive_numbers(v)]
    return [float(value)] if isinstance(value, (int, float)) else []


@pytest.mark.parametrize("bench", [pytest.param(b, marks=pytest.mark.slow) if b in SLOW_BENCHES else b
                                   for b in BENCHES])
def test_bench_smoke(bench, scripts_path, tmp_path, monkeypatch, capsys):
    """Each bench at --smoke size, offline (empty cache, no mirror): it prints its lines and returns timings."""
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "empty_mirror"))
    (tmp_path / "empty_mirror").mkdir()
    import torch

    threads = torch.get_num_threads()
    try:
        result = importlib.import_module(bench).main(["--smoke"])
    finally:
        torch.set_num_threads(threads)
    numbers = positive_numbers(result)
    assert numbers and all(math.isfinite(x) and x > 0 for x in numbers), result
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("args", [["--task", "binary"], ["--task", "binary", "--method", "beta_elbo"]])
@pytest.mark.slow
def test_bench_batched_binary_smoke(args, scripts_path):
    import bench_batched

    assert bench_batched.main([*args, "--smoke"]) > 0


def test_bench_threads_crossover_smoke(scripts_path):
    """`--crossover` (the thread crossover grid, in process; the default mode starts processes and is slow): one
    finite positive N-thread / 1-thread ratio per B:M size."""
    import bench_threads
    import torch

    threads = torch.get_num_threads()
    try:
        ratios = bench_threads.main(["--crossover", "--smoke", "--sizes", "100:10,120:12", "--threads", "2"])
    finally:
        torch.set_num_threads(threads)
    assert set(ratios) == {(100, 10), (120, 12)} and all(math.isfinite(r) and r > 0 for r in ratios.values())


def test_bench_pac_sgp_blocked_smoke(scripts_path):
    """`--blocked` at its smallest size still takes two blocks of 2048 points (and asserts equal loss and gradient)."""
    import bench_pac_sgp

    ratio, seconds = bench_pac_sgp.main(["--blocked", "--smoke"])
    assert ratio > 0 and seconds > 0


def test_bench_peers_without_gpflow_is_one_line(scripts_path):
    """bench_peers.py needs .venv-peers' GPflow; without it, a config error (one line, exit 2 through entry.run)."""
    import bench_peers
    from dlm_bench.errors import ConfigError

    try:
        import gpflow  # noqa: F401
    except ImportError:
        with pytest.raises(ConfigError, match="make bench-peers"):
            bench_peers.main(["--smoke"])
    else:
        assert bench_peers.main(["--smoke"])


def in_process(script, args, monkeypatch) -> int:
    monkeypatch.setattr(sys, "argv", [str(SCRIPTS / script), *map(str, args)])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(SCRIPTS / script), run_name="__main__")
    return exc.value.code


def test_make_gp_synthetic_tiny(tmp_path, scripts_path, monkeypatch):
    out = tmp_path / "gp.csv"
    assert in_process("make_gp_synthetic.py", [out, "--n", 30, "--d", 2], monkeypatch) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 31 and len(lines[0].split(",")) == 3


def test_make_gp_synthetic_one_data_set_per_seed(tmp_path, scripts_path, monkeypatch, capsys):
    """`--seeds` (make reproduce-pac-appF-draws): one file per seed, each with its own lengthscales; seed 0's file is
    the single data set `--seed 0` writes (pac_appF's); OUT without {seed} is refused."""
    pattern = str(tmp_path / "seed{seed}" / "gp.csv")
    assert in_process("make_gp_synthetic.py", [pattern, "--n", 40, "--d", 3, "--seeds", "0-2"], monkeypatch) == 0
    lengthscales = [line.split("lengthscales ")[1] for line in capsys.readouterr().out.splitlines()]
    assert len(set(lengthscales)) == 3
    assert in_process("make_gp_synthetic.py", [tmp_path / "one.csv", "--n", 40, "--d", 3], monkeypatch) == 0
    assert (tmp_path / "seed0" / "gp.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()
    assert (tmp_path / "seed1" / "gp.csv").read_bytes() != (tmp_path / "seed2" / "gp.csv").read_bytes()
    assert in_process("make_gp_synthetic.py", [tmp_path / "x.csv", "--seeds", "0-1"], monkeypatch) == 2
    assert "must contain {seed}" in capsys.readouterr().err


def test_pac_appF_draws_reads_each_seeds_own_data_under_one_dataset_name():
    """pac_appF_draws: seed s trains on draws/seed<s>/ (the paper's new data per repetition), and every file keeps
    pac_appF's file name, so the report (which groups by the data set's name, the file's stem) pools the seeds."""
    from dlm_bench.sweeps.compose import compose_config

    paths = [Path(compose_config(["experiment=pac_appF_draws", f"seed={s}"]).dataset.path) for s in (0, 7)]
    assert paths[0] != paths[1] and paths[1].parent.name == "seed7"
    assert {p.stem for p in paths} == {Path(compose_config(["experiment=pac_appF"]).dataset.path).stem}


def test_make_logistic_synthetic_tiny(tmp_path, scripts_path, monkeypatch):
    assert in_process("make_logistic_synthetic.py", [tmp_path, "--n", 40, "--dims", "3"], monkeypatch) == 0
    written = list(tmp_path.glob("*.csv"))
    assert len(written) == 1 and len(written[0].read_text().splitlines()) == 41


@pytest.mark.parametrize("variant", [[], ["--m-at", "mode", "--data", "active"]], ids=["all_prior", "active_mode"])
def test_sggpm_fig1_variants_tiny(variant, tmp_path, scripts_path, monkeypatch):
    """Both readings `make reproduce-sggpm-fig1` runs (the make target's SMOKE=1 is 50 repetitions of 1000 inputs)."""
    assert in_process("sggpm_fig1.py", [tmp_path / "out", "--reps", 2, "--n", 60, *variant], monkeypatch) == 0
    assert any((tmp_path / "out").iterdir())


def test_fp_fig1_sign_maps_tiny(tmp_path, scripts_path, monkeypatch):
    """`make reproduce-fp-fig1`'s script on a 10 x 10 grid, sign maps only (the scatter panels need banana)."""
    assert in_process("fp_fig1.py", [tmp_path, "--grid", 10, "--no-scatter"], monkeypatch) == 0
    assert list(tmp_path.glob("*.png"))


def test_fp_supp2_smoke_tiny(tmp_path, scripts_path, monkeypatch):
    """`make reproduce-fp-supp2 SMOKE=1`'s command (generated wlan-like data) with 5 FP updates (the fewest)."""
    args = [tmp_path, "--dataset", "synthetic_wlan", "--indices", "auto", "--updates", 5]
    assert in_process("fp_supp2.py", args, monkeypatch) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["dataset"] == "synthetic_wlan" and summary["updates"] == 5
    # no point 2-cycles in 5 updates here: auto picks the 3 that still move most (it drew an empty plot before)
    gaps = summary["index_gap_last"]
    assert len(summary["indices"]) == 3 and gaps == sorted(gaps, reverse=True) and not any(summary["index_two_cycles"])


def test_compare_runs(tmp_path, scripts_path, monkeypatch, capsys):
    """Equal folders: exit 0; one metric changed: exit 1 and the run named; a missing folder: one line, exit 2."""
    for side, nll in (("a", 0.5), ("b", 0.5), ("c", 0.6)):
        run = tmp_path / side / "exp" / "run1"
        run.mkdir(parents=True)
        (run / "run.json").write_text(f'{{"status": "ok", "metrics": {{"test_nll": {nll}, "wall_s": {nll}}}}}')
    assert in_process("compare_runs.py", [tmp_path / "a", tmp_path / "b"], monkeypatch) == 0
    assert in_process("compare_runs.py", [tmp_path / "a", tmp_path / "c"], monkeypatch) == 1
    assert "DIFFER ['test_nll']" in capsys.readouterr().out
    assert in_process("compare_runs.py", [tmp_path / "a", tmp_path / "nope"], monkeypatch) == 2
    assert capsys.readouterr().err.strip() == f"compare_runs.py: error: no such results folder: {tmp_path / 'nope'}"


@pytest.mark.parametrize("raised, code, line", [
    ("ConfigError('beta must be positive')", 2, "x.py: error: beta must be positive"),
    ("FileNotFoundError('no such file: a.csv')", 2, "x.py: error: no such file: a.csv"),
    ("ZeroDivisionError('division by zero')", 1,
     "x.py: internal error: ZeroDivisionError: division by zero (set DLM_BENCH_DEBUG=1 for a traceback)"),
    ("KeyboardInterrupt()", 130, "x.py: interrupted"),
    ("Terminated()", 143, "x.py: terminated (SIGTERM)"),
])
def test_entry_run_speaks_like_the_cli(raised, code, line, scripts_path, monkeypatch, capsys):
    """entry.run: dlm-bench's one-line errors and exit codes (cli.py main: 2 user error, 1 internal, 130, 143)."""
    import entry
    from dlm_bench.errors import ConfigError, Terminated  # noqa: F401 (used by eval)

    monkeypatch.delenv("DLM_BENCH_DEBUG", raising=False)
    monkeypatch.setattr(sys, "argv", ["scripts/x.py"])

    err = eval(raised, {"ConfigError": ConfigError, "Terminated": Terminated})

    def main():
        raise err

    with pytest.raises(SystemExit) as exc:
        entry.run(main)
    assert exc.value.code == code
    assert capsys.readouterr().err.strip() == line


@pytest.mark.parametrize("returned, code", [(None, 0), (1, 1), (0.93, 0), ((1.2, 3.4), 0), (True, 0)])
def test_entry_run_exit_status(returned, code, scripts_path):
    """An int main returns is the exit status (compare_runs: 1 on a difference); a bench's ratios are not."""
    import entry

    with pytest.raises(SystemExit) as exc:
        entry.run(lambda: returned)
    assert exc.value.code == code


@pytest.mark.parametrize("script", sorted(p.name for p in SCRIPTS.glob("*.sh")))
def test_shell_scripts_parse(script):
    """`bash -n`: the shell scripts parse (local-slurm.sh runs in make test-slurm, six_run_check.sh below, slow)."""
    assert subprocess.run(["bash", "-n", str(SCRIPTS / script)], capture_output=True).returncode == 0


def test_six_run_check_without_its_argument_says_usage():
    r = subprocess.run(["bash", str(SCRIPTS / "six_run_check.sh")], capture_output=True, text=True)
    assert r.returncode != 0 and "usage: six_run_check.sh OUT" in r.stderr


@pytest.mark.slow
def test_six_run_check_then_compare_runs(tmp_path, shared_data, scripts_path, monkeypatch):
    """The refactor check end to end: six runs (sggpm's ucsdpeds1l from the mirror), then compare_runs of the folder
    with itself: 6 runs, 0 differences."""
    env = {**os.environ, "DLM_BENCH_MIRROR": str(shared_data), "DLM_BENCH_DATA": str(tmp_path / "cache"),
           "DLM_BENCH": str(Path(sys.executable).parent / "dlm-bench")}
    r = subprocess.run(["bash", str(SCRIPTS / "six_run_check.sh"), str(tmp_path / "out")], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(list((tmp_path / "out").rglob("run.json"))) == 6
    assert in_process("compare_runs.py", [tmp_path / "out", tmp_path / "out"], monkeypatch) == 0


@pytest.mark.parametrize("mirror", ["unset", "empty directory"])
def test_bench_savigp_offline_without_its_data_is_one_line(mirror, tmp_path, scripts_path, monkeypatch, capsys):
    """What `make bench` prints in a fresh clone (empty cache, no mirror): one `skipped` line, nothing sent over the
    network (benchkit.missing_offline asks availability.locate without probing), and the summary goes on."""
    import bench_savigp

    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    if mirror == "unset":
        monkeypatch.delenv("DLM_BENCH_MIRROR", raising=False)
    else:
        (tmp_path / "mirror").mkdir()
        monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "mirror"))
    why = bench_savigp.main(["--rounds", "1"])
    assert isinstance(why, str) and why.startswith("skipped: needs dataset boston_savigp")
    assert capsys.readouterr().out.strip().splitlines() == [f"SAVIGP ELBO: {why}"]
