"""The dataset catalogue is data (catalog.yaml, issue 56): it loads into the registry, every entry names a parser
that exists and files that are listed, hashes are in pooch's form, and the YAML ships inside the package."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from dlm_bench.data import DATASETS, catalog, recipes

REPO = Path(__file__).resolve().parents[3]


def test_manifest_is_the_registry():
    doc = catalog.load_manifest()
    assert sorted(doc["datasets"]) == sorted(DATASETS)
    for name, d in doc["datasets"].items():
        spec = DATASETS[name]
        assert spec.parser_name == d["parser"] and d["parser"] in recipes.PARSERS
        assert [f.mirror_path for f in spec.files] == list(d.get("files", []))
        assert list(spec.shape) == d["shape"] and spec.task == d["task"]
    for path, e in doc["files"].items():
        assert e["hash"] is None or re.fullmatch(r"sha(256:[0-9a-f]{64}|512:[0-9a-f]{128})", e["hash"]), path


def test_catalog_code_holds_no_urls_or_hashes():
    text = (REPO / "dlm_bench/data/catalog.py").read_text()
    assert "http" not in text and not re.search(r"[0-9a-f]{64}", text)


def test_manifest_ships_in_the_package():
    """dlm_bench.data is a package setup.py finds (tests/unit/test_packaging.py), and a package-data rule ships its
    catalog.yaml."""
    rules = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert (REPO / "dlm_bench/data/__init__.py").is_file()
    assert any(Path("catalog.yaml").match(g) for g in rules.get("*", []) + rules.get("dlm_bench.data", []))


@pytest.mark.parametrize("entry,msg", [
    ({"task": "binary", "papers": [], "shape": [1, 1], "parser": "nope"}, "parser 'nope'"),
    ({"task": "binary", "papers": [], "shape": [1, 1], "parser": "musk", "files": ["x/y"]}, "not listed"),
    ({"task": "binary", "papers": [], "shape": [1, 1], "parser": "musk", "urll": 1}, "unknown key"),
])
def test_malformed_entry_is_named(entry, msg):
    with pytest.raises(ValueError, match=msg) as e:
        catalog.spec_from_entry("toy", entry, {})
    assert "toy" in str(e.value)


def test_bad_hash_form_is_refused():
    with pytest.raises(ValueError, match="sha256:<hex> or sha512:<hex>"):
        catalog.remote_file("a/b", {"url": "http://x", "hash": "md5:abc"})


def test_docs_url_table_is_the_catalogue():
    from dlm_bench.data.api import url_table_markdown

    doc = (REPO / "docs/datasets.md").read_text()
    assert url_table_markdown() in doc, "regenerate the URL table of docs/datasets.md from url_table_markdown()"
