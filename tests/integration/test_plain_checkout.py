"""A plain checkout works (issue 75): dlm_bench imported from a copy of the tree with only PYTHONPATH set (no pip
install, the editable install's finder kept out) finds the repository's conf/ and composes; a tree without conf/
says to run `make install` in one line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the editable install's import hook (setuptools' __editable__ finder) maps dlm_bench.conf to this worktree's conf/:
# dropped, the copy is imported as a plain checkout would be
SCRIPT = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
import dlm_bench
from dlm_bench.cli import main
print("IMPORTED", dlm_bench.__file__, flush=True)
sys.exit(main(sys.argv[1:]))
"""


def plain_copy(dest: Path, with_conf: bool = True) -> Path:
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "dlm_bench", dest / "dlm_bench", ignore=ignore)
    shutil.copytree(ROOT / "data", dest / "data", ignore=ignore)
    if with_conf:
        shutil.copytree(ROOT / "conf", dest / "conf", ignore=ignore)
    return dest


def run_plain(tree: Path, args: list[str], env: dict) -> subprocess.CompletedProcess:
    env = {**env, "PYTHONPATH": str(tree)}
    return subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, env=env,
                          cwd=tree, timeout=300)


def test_plain_checkout_finds_its_configs(tmp_path, cli_env):
    tree = plain_copy(tmp_path / "clone")
    proc = run_plain(tree, ["run", "model=sgpr", "seed=4", "--cfg", "job"], cli_env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"IMPORTED {tree / 'dlm_bench' / '__init__.py'}" in proc.stdout  # the copy, not this worktree
    assert "\nmodel:\n  name: sgpr\n" in proc.stdout and "\nseed: 4\n" in proc.stdout
    listing = run_plain(tree, ["experiments"], cli_env)
    assert listing.returncode == 0 and "dlm_supp_pol" in listing.stdout and "sgpr" in listing.stdout


def test_tree_without_configs_says_make_install(tmp_path, cli_env):
    tree = plain_copy(tmp_path / "partial", with_conf=False)
    proc = run_plain(tree, ["experiments"], cli_env)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dlm-bench: error: ") and "make install" in err[0], proc.stderr
