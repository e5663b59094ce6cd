"""The scoreboard's table, read from docs/reproductions/scoreboard.yaml: every figure and table of the five papers ->
the experiment(s) that reproduce it, the committed report dir(s) under docs/reproductions/, a status, the reason when
not run, the paper's number (where it prints one) and ours (read from a committed report's Markdown table).

The rows are data (issue 56: facts live as data files), so they are kept in YAML beside the reports they describe;
this module only gives them a shape (Row, Num) and checks the file's form. Whether the rows agree with the experiment
configs, the report layouts and the committed reports is checked by scoreboard.problems(). No torch here (nor in
scoreboard.py): `import dlm_bench.report.scoreboard` stays light.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

import yaml  # PyYAML: a requirement of omegaconf, which dlm_bench requires

ROOT = Path(__file__).resolve().parents[2]
TABLE = Path("docs") / "reproductions" / "scoreboard.yaml"  # relative to the repository root
NOT_RUN_KEY = "not_run"  # the status that needs a reason


class TableError(ValueError):
    """scoreboard.yaml is not of the expected form (one line, naming the row and the field)."""


@dataclass(frozen=True)
class Num:
    """One of our numbers: the cell `column` of the row of a Markdown table (in docs/reproductions/`path`) whose
    cells equal `where`; `heading`: the table under the first heading containing this text (files with several)."""

    label: str
    path: str
    column: str
    where: tuple[tuple[str, str], ...] = ()
    heading: str | None = None


def num(label: str, path: str, column: str, heading: str | None = None, **where) -> Num:
    return Num(label, path, column, tuple((k, str(v)) for k, v in where.items()), heading)


@dataclass(frozen=True)
class Row:
    paper: str
    item: str  # "Fig. 1(c)", "Suppl. Fig. 3", "Table 2"; one row per figure / table (a panel where they differ)
    what: str
    status: str  # the status text (statuses[key] of the YAML; an unknown key is kept as is and flagged by problems())
    experiments: tuple[str, ...] = ()  # conf/experiment/<name>.yaml (full variant) or a `scripts` key
    reports: tuple[str, ...] = ()  # docs/reproductions/<dir>
    reason: str | None = None  # the reason text (reasons[key]), or None
    paper_value: str = ""  # the paper's printed number or claim
    ours: tuple[Num, ...] = ()
    ours_text: str = ""  # our number when no table cell holds it (quoted from the report's README)
    note: str = ""
    figures: tuple[str, ...] = field(default=())  # the paper's figure / table numbers this row covers, e.g. ("Fig. 1",)


@dataclass(frozen=True)
class Table:
    statuses: tuple[str, ...]  # texts, in the order of the counts table
    not_run: str  # the text of the status that needs a reason
    reasons: tuple[str, ...]
    papers: dict[str, tuple[str, str]]  # key -> (citation, paper text in shared/papers/)
    scripts: dict[str, str]  # figure scripts (make targets) without a conf/experiment/*.yaml sweep
    not_a_paper_figure: dict[str, str]  # experiments with a layout but no paper figure of their own
    rows: tuple[Row, ...]


_ROW_FIELDS = {f.name for f in fields(Row)}
_NUM_FIELDS = {"label", "path", "column", "where", "heading"}
_TUPLES = ("experiments", "reports", "figures")


def _text_map(doc: dict, key: str, path: Path) -> dict[str, str]:
    m = doc.get(key)
    if not isinstance(m, dict) or not m or not all(isinstance(v, str) for v in m.values()):
        raise TableError(f"{path}: `{key}` must be a mapping of key -> text")
    return {str(k): v for k, v in m.items()}


def _num(d, where: str) -> Num:
    if not isinstance(d, dict) or not {"label", "path", "column"} <= set(d) or set(d) - _NUM_FIELDS:
        raise TableError(f"{where}: each `ours` entry needs label, path, column (and may have where, heading); got {d!r}")
    w = d.get("where") or {}
    if not isinstance(w, dict):
        raise TableError(f"{where}: `where` must be a mapping of column -> cell text")
    return Num(str(d["label"]), str(d["path"]), str(d["column"]), tuple((str(k), str(v)) for k, v in w.items()),
               None if d.get("heading") is None else str(d["heading"]))


def _row(d, i: int, statuses: dict[str, str], reasons: dict[str, str], path: Path) -> Row:
    where = f"{path.name} row {i + 1}"
    if not isinstance(d, dict):
        raise TableError(f"{where}: a row must be a mapping, got {type(d).__name__}")
    where += f" ({d.get('paper')} {d.get('item')})"
    missing = {"paper", "item", "what", "status"} - set(d)
    if missing:
        raise TableError(f"{where}: missing {', '.join(sorted(missing))}")
    unknown = set(d) - _ROW_FIELDS
    if unknown:
        raise TableError(f"{where}: unknown field(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_ROW_FIELDS))})")
    kw = {k: v for k, v in d.items() if k not in ("ours",)}
    for k in _TUPLES:
        if k in kw:
            v = kw[k]
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise TableError(f"{where}: `{k}` must be a list of names")
            kw[k] = tuple(v)
    kw["status"] = statuses.get(d["status"], d["status"])
    if d.get("reason") is not None:
        kw["reason"] = reasons.get(d["reason"], d["reason"])
    for k in ("paper", "item", "what", "paper_value", "ours_text", "note"):
        if k in kw and not isinstance(kw[k], str):
            raise TableError(f"{where}: `{k}` must be text, got {kw[k]!r}")
    ours = d.get("ours") or []
    if not isinstance(ours, list):
        raise TableError(f"{where}: `ours` must be a list")
    kw["ours"] = tuple(_num(n, where) for n in ours)
    return Row(**kw)


def load(path: Path | None = None, root: Path = ROOT) -> Table:
    """Read and shape scoreboard.yaml (default: root/docs/reproductions/scoreboard.yaml); raises TableError."""
    path = Path(path) if path is not None else root / TABLE
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise TableError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise TableError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(doc, dict):
        raise TableError(f"{path}: expected a mapping with statuses, reasons, papers, scripts, not_a_paper_figure, rows")
    statuses = _text_map(doc, "statuses", path)
    if NOT_RUN_KEY not in statuses:
        raise TableError(f"{path}: `statuses` needs the key {NOT_RUN_KEY}")
    reasons = _text_map(doc, "reasons", path)
    papers = doc.get("papers")
    if not isinstance(papers, dict) or not all(isinstance(v, dict) and set(v) == {"citation", "text"}
                                               for v in papers.values()):
        raise TableError(f"{path}: `papers` must map each key to citation and text")
    rows = doc.get("rows")
    if not isinstance(rows, list):
        raise TableError(f"{path}: `rows` must be a list")
    unknown = set(doc) - {"statuses", "reasons", "papers", "scripts", "not_a_paper_figure", "rows"}
    if unknown:
        raise TableError(f"{path}: unknown top-level key(s) {', '.join(sorted(map(str, unknown)))}")
    return Table(
        statuses=tuple(statuses.values()), not_run=statuses[NOT_RUN_KEY], reasons=tuple(reasons.values()),
        papers={str(k): (v["citation"], v["text"]) for k, v in papers.items()},
        scripts=_text_map(doc, "scripts", path), not_a_paper_figure=_text_map(doc, "not_a_paper_figure", path),
        rows=tuple(_row(d, i, statuses, reasons, path) for i, d in enumerate(rows)))
