"""The scoreboard (docs/reproductions/README.md) stays in step with the experiment specs and the committed reports."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dlm_bench.report import scoreboard as sb
from dlm_bench.report.scoreboard_table import TableError, load, num

TABLE = load()
ROWS, PAPERS = TABLE.rows, TABLE.papers

PAPER_TEXTS = Path(__file__).resolve().parents[3] / "shared" / "papers"


def test_no_problems():
    """Every experiment / report key / spec / figure script has a row; every linked report and experiment exists;
    every number we quote is found in its report table; statuses and reasons are from the fixed lists."""
    assert sb.problems() == []


def test_every_spec_has_a_row():
    covered = {e for r in ROWS for e in r.experiments}
    exps = sb.experiments()
    covered |= {exps[e] for e in covered if exps.get(e)}
    assert sb.known_items() - covered == set()
    assert "dlm_fig1c" in sb.known_items() and "pac_table2" in sb.known_items()


def test_linked_reports_exist():
    for r in ROWS:
        for d in r.reports:
            assert (sb.ROOT / sb.REPORTS / d / "README.md").is_file(), (r.item, d)


def test_not_run_rows_give_a_reason():
    for r in ROWS:
        assert r.status in TABLE.statuses
        if r.status == TABLE.not_run:
            assert r.reason in TABLE.reasons, r.item


def test_committed_readme_is_the_generated_one():
    committed = (sb.ROOT / sb.OUT).read_text()
    assert committed == sb.render(), "docs/reproductions/README.md is stale: run `make scoreboard`"
    assert sb.main(["--check"]) == 0


def test_counts_cover_every_paper():
    c = sb.counts()
    assert set(c) == set(PAPERS)
    assert sum(sum(v.values()) for v in c.values()) == len(ROWS)
    text = sb.render()
    for p in PAPERS:
        assert f"## `{p}`" in text


def test_md_tables_and_lookup(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "t.md").write_text(
        "# x\n\n## a: MFE\n\n| method | M=1 |\n|---|---|\n| FP | 0.1 +- 0.01 |\n\n"
        "## a: CPU s\n\n| method | M=1 |\n|---|---|\n| FP | 3.5 |\n")
    assert sb.lookup(num("x", "r/t.md", "M=1", heading="CPU", method="FP"), tmp_path) == "3.5"
    assert sb.lookup(num("x", "r/t.md", "M=1", method="FP"), tmp_path) == "0.1 +- 0.01"
    with pytest.raises(LookupError):
        sb.lookup(num("x", "r/t.md", "M=1", method="GRAD"), tmp_path)
    with pytest.raises(LookupError):
        sb.lookup(num("x", "r/missing.md", "M=1"), tmp_path)


def test_check_flags_a_stale_file(tmp_path):
    out = tmp_path / "README.md"
    out.write_text("stale\n")
    assert sb.main(["--check", "--out", str(out)]) == 1
    assert sb.main(["--out", str(out)]) == 0
    assert sb.main(["--check", "--out", str(out)]) == 0


def test_scoreboard_does_not_import_torch():
    code = "import sys, dlm_bench.report.scoreboard as s; s.render(); s.problems(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.skipif(not PAPER_TEXTS.is_dir(), reason="the paper texts (shared/papers) are not next to this checkout")
def test_every_caption_of_the_papers_has_a_row():
    """Each "Figure N" / "Table N" caption in a paper's text is covered by a row's `figures`."""
    for key, (_, fname) in PAPERS.items():
        text = (PAPER_TEXTS / fname).read_text()
        captions = {f"{'Fig.' if kind == 'Figure' else 'Table'} {n}"
                    for kind, n in re.findall(r"^(Figure|Table) (\d+)[:.]", text, re.M)}
        covered = {f for r in ROWS if r.paper == key for f in r.figures}
        assert captions - covered == set(), key


def _copy_root(tmp_path, yaml_text):
    """A repository root holding only what the scoreboard reads: conf/experiment, the reports and `yaml_text` as the
    table (the report folders are symlinked, not copied)."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "experiment").symlink_to(sb.ROOT / "conf" / "experiment")
    rep = tmp_path / sb.REPORTS
    rep.mkdir(parents=True)
    for d in (sb.ROOT / sb.REPORTS).iterdir():
        if d.is_dir():
            (rep / d.name).symlink_to(d)
    (rep / "README.md").write_text((sb.ROOT / sb.OUT).read_text())
    (rep / "scoreboard.yaml").write_text(yaml_text)
    return tmp_path


def test_editing_a_row_in_the_yaml_changes_the_readme(tmp_path):
    """The generator reads the YAML: moving one row from not_run to reduced moves one count and rewrites that row's
    status, reason and note, and --check then flags the committed README as stale."""
    text = (sb.ROOT / "docs" / "reproductions" / "scoreboard.yaml").read_text()
    old = ("  item: Fig. 1(b)\n  what: sarcos, test MSE vs training size\n  status: not_run\n  reason: download\n")
    assert text.count(old) == 1
    new = "  item: Fig. 1(b)\n  what: sarcos, test MSE vs training size\n  status: reduced\n  note: an edited note\n"
    root = _copy_root(tmp_path, text.replace(old, new))
    t = load(root=root)
    before, after = sb.counts(TABLE)["dlm"], sb.counts(t)["dlm"]
    assert after[TABLE.not_run] == before[TABLE.not_run] - 1
    assert after["reproduced, reduced size"] == before["reproduced, reduced size"] + 1
    line = next(x for x in sb.render(t, root).splitlines() if x.startswith("| Fig. 1(b) |"))
    assert "| reproduced, reduced size |  |" in line and line.endswith("| an edited note |")
    assert sb.main(["--check", "--root", str(root)]) == 1


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("  status: not_run\n  reason: download\n", "  status: not_run\n  reasn: download\n", 1),
     "unknown field(s) reasn"),
    (lambda s: s.replace("rows:\n", "rows: 3\nold_rows:\n", 1), "`rows` must be a list"),
    (lambda s: s.replace("scripts:\n", "scrips:\n", 1), "unknown top-level key(s) scrips"),
    (lambda s: s + "  - [unclosed\n", "not valid YAML"),
])
def test_a_malformed_table_is_one_line_and_exit_2(tmp_path, capsys, edit, message):
    text = (sb.ROOT / "docs" / "reproductions" / "scoreboard.yaml").read_text()
    root = _copy_root(tmp_path, edit(text))
    with pytest.raises(TableError, match=re.escape(message)):
        load(root=root)
    assert sb.main(["--check", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_status_and_reason_keys_resolve_to_their_texts():
    """The YAML names statuses and reasons by key; the loader gives the rendered texts (a row of each kind)."""
    r = next(r for r in ROWS if r.paper == "dlm" and r.item == "Fig. 1(a)")
    assert (r.status, r.reason) == ("not run", "data needs a download this machine cannot make")
    assert TABLE.statuses[0] == "reproduced, paper size" and TABLE.not_run == "not run"
