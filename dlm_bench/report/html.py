"""index.html: one offline page with every table and figure of a report (figures embedded as base64 PNG, or linked
to the PNG beside the page), the per-seed selected-beta and paired tables first, then index.md's lists of what was
left out. No script, no stylesheet or font from the network: the page reads the same from a laptop without a
connection. page_for_folder: the same page for a committed report folder (docs/reproductions/*/), from its files
alone, figures linked so the repository does not carry each PNG twice."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import pandas as pd

FIRST = ("_selected", "_paired", "_selected_beta")  # file stems ending so come first, in this order
STYLE = """body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}td,th{border:1px solid #bbb;padding:2px 6px}
th{background:#eee}tr:nth-child(even) td{background:#f7f7f7}img{max-width:100%;border:1px solid #ddd}
h2{border-bottom:1px solid #ccc;margin-top:2em}figure{margin:1em 0 2em}"""
SCREENSHOT = "screenshot.png"  # a committed report's picture of its own page (own_data_diabetes), not a figure
LONG_TABLE = 60  # rows: a longer table is folded (<details>), a click opens it


def _rank(path: Path) -> tuple[int, str]:
    stem = path.stem
    for i, end in enumerate(FIRST):
        if stem.endswith(end):
            return i, stem
    return len(FIRST), stem


def _inline(text: str) -> str:
    """Escaped text with markdown links [a](b) as <a href="b">a</a> and `code` as <code>."""
    out = html.escape(text)
    out = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", lambda m: f'<a href="{m.group(2)}">{m.group(1)}</a>', out)
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", out)


def _table(rows: list[str]) -> str:
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    head, body = cells[0], [c for c in cells[1:] if not all(set(x) <= set("-: ") for x in c)]
    table = ("<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead><tbody>"
             + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in body)
             + "</tbody></table>")
    if len(body) > LONG_TABLE:
        return f"<details><summary>{len(body)} rows (click to open)</summary>{table}</details>"
    return table


def _kind(line: str) -> str:
    return "table" if line.lstrip().startswith("|") else "list" if line.startswith("- ") else "text"


def _block(lines: list[str]) -> str:
    kind = _kind(lines[0])
    if kind == "table":
        return _table(lines)
    if kind == "list":
        return "<ul>" + "".join(f"<li>{_inline(b[2:])}</li>" for b in lines) + "</ul>"
    return f"<p>{_inline(' '.join(lines))}</p>"


def markdown_to_html(text: str, level: int = 0) -> str:
    """The markdown a report writes (headings, pipe tables, lists, paragraphs) as HTML; headings are pushed down
    by `level` so that a table file's title sits under the page's section."""
    parts, block = [], []
    for line in text.splitlines() + [""]:
        heading = re.match(r"(#+)\s+(.*)", line)
        if block and (heading or not line.strip() or _kind(line) != _kind(block[0])):
            parts.append(_block(block))
            block = []
        if heading:
            n = min(len(heading.group(1)) + level, 6)
            parts.append(f"<h{n}>{_inline(heading.group(2))}</h{n}>")
        elif line.strip():
            block.append(line)
    return "\n".join(parts)


def _table_section(path: Path) -> str:
    """A markdown table file as HTML (its own title), or a csv under its name; then a link to the file."""
    if path.suffix == ".md":
        table = markdown_to_html(path.read_text(), level=1)
    else:
        table = f"<h2>{html.escape(path.stem)}</h2>" + pd.read_csv(path).to_html(index=False, border=0, na_rep="-")
    name = html.escape(path.name)
    return f'<section id="{html.escape(path.stem)}">{table}<p><a href="{name}">{name}</a></p></section>'


def _figure_section(path: Path, embed: bool = True) -> str:
    name = html.escape(path.name)
    src = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii") if embed else name
    return (f'<figure id="{html.escape(path.stem)}"><img alt="{name}" src="{src}">'
            f'<figcaption><a href="{name}">{name}</a></figcaption></figure>')


def folder_files(folder: Path) -> dict:
    """A committed report folder's tables (every .md but README.md and index.md, and each .csv without a .md
    beside it) and figures (.png but screenshot.png, a picture of the page itself), as write_html's `made`."""
    md = [p for p in folder.glob("*.md") if p.name not in ("README.md", "index.md")]
    csv = [p for p in folder.glob("*.csv") if not p.with_suffix(".md").exists()]
    return {"tables": sorted(md + csv), "figures": sorted(p for p in folder.glob("*.png") if p.name != SCREENSHOT)}


def page_for_folder(folder: Path) -> Path:
    """index.html for a report folder from the files in it (the committed tables are read, never rewritten)."""
    return write_html(Path(folder), folder_files(Path(folder)), embed=False)


def write_html(out: Path, made: dict, embed: bool = True) -> Path:
    """index.html beside index.md: the tables (markdown where a table has it, else its csv), then the figures
    (PNG; embedded, or linked with embed=False), each group with the per-seed selected and the paired ones first,
    then index.md itself. A README.md beside it (a committed reproduction's note) is linked at the top."""
    tables = [p for p in made["tables"] if p.suffix == ".md" or not p.with_suffix(".md").exists()]
    tables = sorted(dict.fromkeys(tables), key=_rank)
    figures = sorted(dict.fromkeys(p for p in made["figures"] if p.suffix == ".png"), key=_rank)
    body = ["<h1>dlm_bench report</h1>", '<nav><a href="#tables">tables</a> · <a href="#figures">figures</a> · '
            '<a href="#index">what was left out</a></nav>']
    if (out / "README.md").is_file():
        body += ['<p>What was run and how it compares with the paper: <a href="README.md">README.md</a></p>']
    body += ['<h2 id="tables">Tables</h2>']
    body += [_table_section(p) for p in tables] or ["<p>none</p>"]
    body += ['<h2 id="figures">Figures</h2>']
    body += [_figure_section(p, embed) for p in figures] or ["<p>none</p>"]
    index = out / "index.md"
    body += ['<div id="index">' + markdown_to_html(index.read_text(), level=1) + "</div>"] if index.is_file() else []
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dlm_bench report</title>"
            f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    (out / "index.html").write_text(page)
    return out / "index.html"
