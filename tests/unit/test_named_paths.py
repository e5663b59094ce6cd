"""No stale paths: every repository path that README.md, docs/ and conf/ name (prose, tables, YAML comments) exists.

What counts as a path: a token that starts with one of the repository's top-level folders and a slash
(`dlm_bench/run/batched.py`, `conf/experiment/`, `tests/integration/test_sweep.py`), in or out of backticks. Left out:
placeholders (a token followed by `*`, `<`, `{` or `$`: `docs/reproductions/fp_fig*_smoke/`), results/ (outputs a
run writes) and the few names the text says do not exist (NOT_PATHS)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name[0] not in "._"
             and p.name != "results" and not p.name.endswith(".egg-info"))
TOKEN = re.compile(r"(?<![\w./~-])((?:%s)/[\w./-]*)(.?)" % "|".join(map(re.escape, TOP)))
NOT_PATHS = {"conf/dataset"}  # docs/datasets.md: "there is no `conf/dataset/` folder" (generated from the registry)
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "conf").rglob("*.yaml"))]


def named_paths(text: str) -> list[str]:
    return [m.group(1).rstrip("/.-") for m in TOKEN.finditer(text) if m.group(2) not in ("*", "<", "{", "$")]


def test_token_rule_on_known_text():
    """The rule itself, on lines written for it: real paths are found, placeholders and prose are not."""
    text = ("see dlm_bench/run/batched.py, `conf/experiment/` and tests/unit/test_docs.py. "
            "docs/reproductions/fp_fig*_smoke/ and conf/method/<name>.yaml are patterns; "
            "results/x/run.json is output; a/b and mydlm_bench/x.py are not ours")
    assert named_paths(text) == ["dlm_bench/run/batched.py", "conf/experiment", "tests/unit/test_docs.py"]


def test_every_named_repository_path_exists():
    assert {"conf", "dlm_bench", "docs", "tests"} <= set(TOP)
    stale = {}
    for source in SOURCES:
        for token in named_paths(source.read_text()):
            if token not in NOT_PATHS and not (ROOT / token).exists():
                stale.setdefault(token, []).append(str(source.relative_to(ROOT)))
    assert not stale, "paths named in README/docs/conf that do not exist: " + "; ".join(
        f"{t} (in {', '.join(sorted(set(s))[:3])})" for t, s in sorted(stale.items()))
