"""The wheel must contain every subpackage, its YAML files and the config tree. The packages are found by setup.py
(conf/ and data/ are mapped into the package, which pyproject alone cannot combine with discovery), so a new
package (a paper's) needs no packaging edit; its YAML is shipped by pyproject's package-data "*" rule."""

import fnmatch
import runpy
import tomllib
from pathlib import Path

import setuptools

REPO = Path(__file__).resolve().parents[2]


def setup_packages(monkeypatch) -> list[str]:
    """The package list setup.py hands setuptools (setup() captured, nothing built)."""
    captured = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: captured.update(kw))
    monkeypatch.chdir(REPO)
    runpy.run_path(str(REPO / "setup.py"), run_name="__main__")
    return captured["packages"]


def test_every_subpackage_is_found_by_setup_py(monkeypatch):
    listed = set(setup_packages(monkeypatch))
    found = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "dlm_bench").rglob("__init__.py")}
    assert found <= listed, f"setup.py does not find: {sorted(found - listed)}"
    assert {"dlm_bench.conf", "dlm_bench.shipped_data"} <= listed
    assert "tests" not in {p.split(".")[0] for p in listed}  # the fixtures' paper (tests/fixtures) is not shipped
    assert "packages" not in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_yaml_under_dlm_bench_matches_a_package_data_rule():
    rules = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    missed = []
    for path in (REPO / "dlm_bench").rglob("*.yaml"):
        package = ".".join(path.parent.relative_to(REPO).parts)
        patterns = rules.get("*", []) + rules.get(package, [])
        if not any(fnmatch.fnmatch(path.name, p) for p in patterns):
            missed.append(str(path.relative_to(REPO)))
    assert missed == []
