"""Every committed report under docs/reproductions/ (runs archived beside it, or an index.md) has an index.html that
shows or links each table and figure in its folder; scripts/reproduction_pages.py writes such a page from the folder's
files alone, figures linked (no base64 copy of each PNG in the repository), the tables untouched."""

from __future__ import annotations

import hashlib
import runpy
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dlm_bench.report.html import folder_files

REPO = Path(__file__).resolve().parents[3]
REPRODUCTIONS = REPO / "docs" / "reproductions"
FOLDERS = sorted(d for d in REPRODUCTIONS.iterdir()
                 if d.is_dir() and (any(d.glob("*runs*.tgz")) or (d / "index.md").is_file()))


class _Refs(HTMLParser):
    """What a page points at or names: href, src (a file name, not a data URI), img alt, element ids."""

    def __init__(self):
        super().__init__()
        self.names, self.ids, self.data_uris = set(), set(), 0

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src", "alt") and value and not value.startswith("data:"):
                self.names.add(value)
            elif key == "src" and value:
                self.data_uris += 1
            elif key == "id":
                self.ids.add(value)


def _refs(page: Path) -> _Refs:
    parser = _Refs()
    parser.feed(page.read_text())
    return parser


def test_the_committed_reports_are_found():
    names = {d.name for d in FOLDERS}
    assert {"dlm_supp_pol", "own_data_diabetes", "dlm_classification", "fp_fig2_smoke", "pac_table3"} <= names


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda d: d.name)
def test_every_committed_report_has_an_index_html_naming_each_table_and_figure(folder):
    page = folder / "index.html"
    assert page.is_file(), f"{folder.name}: no index.html (python scripts/reproduction_pages.py writes it)"
    refs = _refs(page)
    made = folder_files(folder)
    missing = [p.name for p in made["tables"] + made["figures"] if p.name not in refs.names and p.stem not in refs.ids]
    assert not missing, f"{folder.name}/index.html leaves out {missing}"
    assert not [n for n in refs.names if "://" in n and not n.startswith("#")], "a page reads nothing from the network"


def _digests(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if p.name != "index.html"}


def test_script_writes_linked_pages_and_leaves_the_tables(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "rep"
    folder.mkdir()
    (folder / "runs.tgz").write_bytes(b"")
    (folder / "README.md").write_text("# note\n")
    (folder / "x_selected.md").write_text("# x: selected\n\n| method | beta |\n|---|---|\n| DLM | 0.5 |\n")
    (folder / "x_selected.csv").write_text("method,beta\nDLM,0.5\n")  # its .md is shown instead
    (folder / "only.csv").write_text("a,b\n1,2\n")
    (folder / "fig.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    (tmp_path / "not_a_report").mkdir()
    before = _digests(folder)
    monkeypatch.setattr(sys, "argv", ["reproduction_pages.py", "--root", str(tmp_path)])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(REPO / "scripts" / "reproduction_pages.py"), run_name="__main__")
    assert exc.value.code == 0 and _digests(folder) == before
    assert not (tmp_path / "not_a_report" / "index.html").exists()
    refs = _refs(folder / "index.html")
    assert refs.data_uris == 0 and {"fig.png", "x_selected.md", "only.csv", "README.md"} <= refs.names
    assert "x_selected.csv" not in refs.names and "rep/index.html" in capsys.readouterr().out
    text = (folder / "index.html").read_text()
    assert text.index("x_selected") < text.index("only") and "<td>DLM</td>" in text and "<td>2</td>" in text
