"""The wheel must contain every subpackage and the config tree (pyproject lists packages explicitly,
because conf/ and data/ are mapped into the package)."""

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_subpackage_is_listed_in_pyproject():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "dlm_bench").rglob("__init__.py")
    }
    assert found <= listed, f"add to pyproject [tool.setuptools] packages: {sorted(found - listed)}"
    assert {"dlm_bench.conf", "dlm_bench.shipped_data"} <= listed
