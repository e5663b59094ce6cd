"""`dlm-bench report`: results.parquet, tables (CSV + Markdown), figures (PNG + PDF), index.md and index.html."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pandas as pd

from .collect import ReportError, check_input, collect_runs
from .compare import (SELECTED_NOTE, TOO_FEW, has_beta_grid, paired, pick_baseline, selected_rows, selection_methods,
                      selection_notes, with_grid_flag)
from .figures import (add_selected_lines, make_curve_figure, make_figure, make_paired_figure, make_sweep_figure,
                      save_figure)
from .html import write_html
from .layouts import specs_for, swept_columns
from .spec_types import (
    CurveSpec,
    ExternalSpec,
    FigureSpec,
    PairedSpec,
    PredictiveComparisonSpec,
    PredictiveSpec,
    SweepFigureSpec,
    TableSpec,
)
from .predictive import make_predictive_figure, write_predictive_comparison
from .tables import SERIES, apply_methods, fmt_cell, mean_se, partial_grids, pivot_for_markdown, to_markdown


def missing_points(df: pd.DataFrame, by: list[str]) -> list[str]:
    """Runs that did not finish ok, and cells (a value of each column of `by`) whose ok runs lack a seed that some
    other run of the experiment has: "2 of 3 seeds (missing seed 1)". Comparing with the union of the seeds, not
    with the count of the fullest cell, also finds cells that hold as many seeds as the fullest but other ones
    ({0, 1} next to {1, 2}), and names what is missing instead of a bare count."""
    notes = []
    bad = df[df["status"] != "ok"]
    for r in bad.itertuples(index=False):
        notes.append(f"{r.run_dir}: status {r.status} ({r.error})")
    ok = df[df["status"] == "ok"]
    if ok.empty:
        return notes
    every = set(df["seed"])
    for key, have in ok.groupby(by, dropna=False)["seed"].agg(set).items():
        lack = sorted(every - have)
        if lack:
            key = key if isinstance(key, tuple) else (key,)
            notes.append(f"{dict(zip(by, key))}: {len(have)} of {len(every)} seeds "
                         f"(missing seed{'s' if len(lack) > 1 else ''} {', '.join(map(str, lack))})")
    return notes


CELL = ["dataset", "method", "beta", "train_size"]


def cell_columns(df: pd.DataFrame) -> list[str]:
    """The columns that make a cell of seeds: CELL, and each swept setting that splits one of its cells further
    (num_inducing swept at one beta); settings that do not change results (layouts.NO_EFFECT) never do."""
    base = [c for c in CELL if c in df]
    groups = df.astype({c: str for c in base}).groupby(base, dropna=False)
    return base + [c for c in swept_columns(df) if groups[c].nunique(dropna=False).max() > 1]


def _key(values) -> tuple:
    return tuple(round(v, 6) if isinstance(v, float) else v for v in values)


def compare_with_reference(tidy: pd.DataFrame, by: list[str], reference: dict) -> str:
    """Ours (mean ± SE, n) next to the published (mean ± SE); `>2SE` marks |ours - paper| > 2 sqrt(se^2 + se_paper^2)."""
    ref = {_key(k): v for k, v in reference.items()}
    rows = []
    for r in tidy.itertuples(index=False):
        d = r._asdict()
        paper = ref.get(_key([d[c] for c in by]), {}).get(d["metric"])
        if paper is None:
            continue
        se = 0.0 if pd.isna(d["se"]) else d["se"]
        diff = d["mean"] - paper[0]
        flag = ">2SE" if abs(diff) > 2 * (se**2 + paper[1] ** 2) ** 0.5 else ""
        rows.append({**{c: d[c] for c in by}, "metric": d["metric"], "ours": fmt_cell(d["mean"], d["se"]), "n": d["n"],
                     "paper": fmt_cell(paper[0], paper[1]), "diff": diff, "flag": flag})
    if not rows:
        return "no matching rows\n"
    out = pd.DataFrame(rows)
    return f"{(out['flag'] != '').sum()} of {len(out)} differ by more than 2 combined standard errors\n\n" + to_markdown(out)


def writable_out(out: Path) -> Path:
    """Create `out` and write a probe file there, or raise a one-line ReportError (a read-only filesystem, a
    file in the way, no permission): found before any run is read."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ReportError(f"cannot write the report to {out}: it is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".write-probe.")
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as err:
        raise ReportError(f"cannot write the report to {out}: {err.strerror or err}") from None
    return out


def build_report(dirs, out: Path, paper: str | None = None, baseline: str | list[str] | None = None) -> dict:
    """The report of `dirs` under `out`; a ReportError (one line) when an input cannot be read or `out` cannot
    be written (checked first, and again for every file written), or when a `baseline` (the paired tables' baseline
    label; default compare.DEFAULT_BASELINES) names no method of any experiment (the report is written first).
    Several baselines: the first gives <experiment>_paired, each further one <experiment>_paired_vs_<its slug>."""
    for d in dirs:
        check_input(d)
    created = _missing_folders(Path(out))
    try:
        out = writable_out(out)
        return _build(dirs, out, paper, baseline)
    except BaseException as err:
        _remove_if_empty(created)
        if isinstance(err, OSError) and not isinstance(err, ReportError):  # disk full, read-only remount, ...
            where = err.filename or out
            raise ReportError(f"cannot write the report to {out}: {err.strerror or err} ({where})") from None
        raise


def _missing_folders(out: Path) -> list[Path]:
    """`out` and those of its parents that do not exist yet (what writable_out will create), innermost first."""
    missing = []
    for p in (out, *out.parents):
        if p.exists() or p.is_symlink():
            break
        missing.append(p)
    return missing


def _remove_if_empty(folders: list[Path]) -> None:
    """A report that stopped (no usable run, an unwritable file, Ctrl-C) leaves no empty folder it created;
    a folder that holds anything stays."""
    for p in folders:
        try:
            p.rmdir()
        except OSError:
            return


def _build(dirs, out: Path, paper: str | None, baseline: str | list[str] | None = None) -> dict:
    baselines = [baseline] if baseline is None or isinstance(baseline, str) else list(baseline)
    bad_curves: list = []
    df, skipped = collect_runs(dirs, bad_curves)
    if df.empty:
        extra = f" ({len(skipped)} unusable run.json skipped, e.g. {skipped[0][0]}: {skipped[0][1]})" if skipped else ""
        raise ReportError(f"no usable run.json under {', '.join(map(str, dirs))}{extra}")
    if paper:
        df = df[df["paper"] == paper]
        if df.empty:
            raise ReportError(f"no runs of paper {paper!r} under {', '.join(map(str, dirs))}")
    df.to_parquet(out / "results.parquet", index=False)
    made = {"results": [out / "results.parquet"], "tables": [], "figures": [], "missing": [], "skipped": skipped,
            "skipped_curves": bad_curves, "not_drawn": [], "baselines_used": set()}
    for experiment, sub in df.groupby("experiment", sort=True):
        made["missing"] += [f"[{experiment}] {m}" for m in missing_points(sub, cell_columns(sub))]
        specs = specs_for(experiment, sub)
        selected = _write_selection(sub, specs, out / experiment, experiment, made, baselines)
        for spec in specs:
            stem = out / f"{experiment}_{spec.name}"
            if isinstance(spec, TableSpec):
                made["tables"] += _write_table(sub, spec, stem, experiment, selected)
                made["missing"] += [f"[{experiment}] {spec.name}: {note}"
                                    for note in partial_grids(sub, spec.methods, tuple(spec.by), spec.over)]
            elif isinstance(spec, PairedSpec):
                _write_paired_spec(sub, spec, stem, experiment, made)
            elif isinstance(spec, ExternalSpec):
                written = spec.build([Path(d) / "run.json" for d in sub["run_dir"]], stem, experiment)
                made["figures"] += [p for p in written if p.suffix == ".png"]
                made["tables"] += [p for p in written if p.suffix in (".csv", ".md")]
            elif isinstance(spec, PredictiveComparisonSpec):
                figures, tables = write_predictive_comparison(sub, spec, stem)
                made["figures"] += figures
                made["tables"] += tables
                if not figures:
                    made["not_drawn"].append(f"{stem.name}: no run of its methods has a predictive.json")
            elif isinstance(spec, (FigureSpec, CurveSpec, PredictiveSpec, SweepFigureSpec)):
                drawn = _draw_figure(sub, spec, stem, selected)
                made["figures"] += drawn
                if not drawn:
                    made["not_drawn"].append(f"{stem.name}: no runs match its methods")
    made["counts"] = df["status"].value_counts().to_dict()
    made["index"] = _write_index(out, dirs, len(df), made)
    made["html"] = write_html(out, made)
    made["runs"] = len(df)
    for baseline in (b for b in baselines if b is not None and b not in made["baselines_used"]):
        raise ReportError(f"report.baseline={baseline!r} names no method of these runs (the report was written; "
                          f"its paired tables are missing; see index.md for the methods)")
    return made


def _write_selection(sub, specs, stem: Path, experiment: str, made: dict, baselines: list):
    """<experiment>_selected (one row per dataset, train size, method, seed at the beta chosen on validation) and
    <experiment>_paired (each method against the baseline over seeds; table and figure), for an experiment with a
    beta grid. Returns the selected rows (None without a grid) for the summary tables and the figures against beta."""
    if not has_beta_grid(sub):
        return None
    flagged = with_grid_flag(sub)
    methods = selection_methods(flagged, specs)
    if not methods:
        return None
    sel = selected_rows(flagged, methods)
    made["missing"] += [f"[{experiment}] selected: {n}" for n in selection_notes(flagged, methods)]
    if sel.empty:
        return None
    name = stem.name
    path = stem.with_name(f"{name}_selected")
    sel.to_csv(path.with_suffix(".csv"), index=False)
    path.with_suffix(".md").write_text(
        f"# {name}: {SELECTED_NOTE}, per seed\n\nOne row per dataset, training size, method and seed: the run with the "
        f"lowest validation metric (`selected_by`) among the method's beta grid (ties: the larger beta); a method "
        f"with `selected_by` empty has one beta.\n\n{to_markdown(sel)}")
    made["tables"] += [path.with_suffix(".csv"), path.with_suffix(".md")]
    labels = list(dict.fromkeys(sel["method"]))
    for i, baseline in enumerate(baselines):
        table = f"{name}_paired" if i == 0 else f"{name}_paired_vs_{label_slug(baseline)}"
        base = pick_baseline(labels, baseline)
        if base is None:
            made["not_drawn"].append(f"{table}: no baseline among {labels}" + (f" named {baseline!r}" if baseline else "")
                                     + " (choose one: report.baseline=LABEL)")
            continue
        made["baselines_used"].add(base)
        _write_paired(paired(sel, base), stem.with_name(table), name, base, made)
    return sel


def label_slug(label: str) -> str:
    """A method label as a file-name part: 'DLM (fixed)' -> 'dlm_fixed', 'beta-ELBO' -> 'beta_elbo'."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


def _write_paired_spec(sub, spec: PairedSpec, stem: Path, experiment: str, made: dict) -> None:
    """A PairedSpec: its methods' runs (labelled as the layout names them) paired with its baseline's by seed."""
    data = apply_methods(sub, spec.methods, cell=tuple(spec.by))
    labelled = data.drop(columns="method").rename(columns={SERIES: "method"})
    if spec.baseline not in set(labelled["method"]):
        made["not_drawn"].append(f"{stem.name}: no run of its baseline {spec.baseline!r}")
        return
    pairs = paired(labelled, spec.baseline, by=tuple(spec.by), metrics=tuple(spec.metrics))
    _write_paired(pairs, stem, f"{experiment}_{spec.name}", spec.baseline, made)


def _write_paired(pairs: pd.DataFrame, stem: Path, name: str, base: str, made: dict) -> None:
    pairs.to_csv(stem.with_suffix(".csv"), index=False)
    shown = pairs.assign(p_value=[v if isinstance(v, str) else f"{v:.3g}" for v in pairs["p_value"]])
    stem.with_suffix(".md").write_text(
        f"# {name}: paired differences to {base} over seeds\n\nmean_diff = mean over the seeds both have of "
        f"(method - {base}); se = its standard error; ci95 = half-width of its 95% t interval; wins = seeds where "
        f"the method is lower (better); p_value of the paired t-test and of the Wilcoxon signed-rank test "
        f"(scipy.stats), \"{TOO_FEW}\" below 3 seeds.\n\n{to_markdown(shown)}")
    made["tables"] += [stem.with_suffix(".csv"), stem.with_suffix(".md")]
    fig = make_paired_figure(pairs) if not pairs.empty else None
    if fig is None:
        made["not_drawn"].append(f"{stem.name}: no method shares a seed with {base}")
        return
    made["figures"] += save_figure(fig, stem, dpi=110)


def _write_table(sub, spec: TableSpec, stem: Path, experiment: str, selected=None) -> list[Path]:
    """A TableSpec as csv and markdown (mean ± SE over seeds), and next to the paper's numbers where it has them.
    A table of every method at every beta (no methods of its own) also gets the rows at the beta selected on
    validation (`selected`), labelled so, beta empty."""
    data = apply_methods(sub, spec.methods, cell=tuple(spec.by), over=spec.over)
    by = list(spec.by) + [SERIES]
    tidy = mean_se(data, by, spec.metrics)
    extra = _selected_block(selected, spec) if not spec.methods and selected is not None else None
    (pd.concat([tidy, extra[0]], ignore_index=True) if extra else tidy).to_csv(stem.with_suffix(".csv"), index=False)
    md = pivot_for_markdown(tidy, by) if not tidy.empty else tidy
    text = f"# {experiment}: {spec.name}\n\nmean ± standard error over seeds\n\n{to_markdown(md)}"
    if extra:
        text += f"\n## {SELECTED_NOTE} (per seed, then mean ± standard error over seeds)\n\n{to_markdown(extra[1])}"
    stem.with_suffix(".md").write_text(text)
    written = [stem.with_suffix(".csv"), stem.with_suffix(".md")]
    if spec.reference and not tidy.empty:
        cmp_path = stem.with_name(stem.name + "_vs_paper.md")
        cmp_path.write_text(f"# {experiment}: {spec.name} next to the paper\n\n{compare_with_reference(tidy, by, spec.reference)}")
        written.append(cmp_path)
    return written


def _selected_block(selected: pd.DataFrame, spec: TableSpec):
    """(tidy rows, markdown frame) of the selected rows for a per-beta table: series "<method>", beta empty, the
    mean selected beta as the metric beta_selected."""
    by = [c for c in spec.by if c != "beta" and c in selected]
    rows = selected[selected["selected_by"] != ""].rename(columns={"method": SERIES})
    if rows.empty:
        return None
    tidy = mean_se(rows, by + [SERIES], tuple(spec.metrics) + ("beta_selected",))
    return tidy.assign(beta=float("nan")), pivot_for_markdown(tidy, by + [SERIES])


def _draw_figure(sub, spec, stem: Path, selected=None) -> list[Path]:
    """A figure spec as png and pdf; [] when no run matches its methods. A figure against beta also shows the
    rows at the beta selected on validation (figures.add_selected_lines)."""
    draw = {FigureSpec: make_figure, CurveSpec: make_curve_figure, PredictiveSpec: make_predictive_figure,
            SweepFigureSpec: make_sweep_figure}
    fig = draw[type(spec)](sub, spec)
    if fig is not None:
        add_selected_lines(fig, spec, selected)
    if fig is None:
        # e.g. the Fig. 1(d) ringnorm panel of a sweep run on other datasets: an empty axis would read as a
        # result, and so would a stale file from an earlier report
        for path in (stem.with_suffix(".png"), stem.with_suffix(".pdf")):
            path.unlink(missing_ok=True)
        return []
    return save_figure(fig, stem, dpi=130)


def _write_index(out: Path, dirs, runs: int, made: dict) -> Path:
    """index.md: what the report holds and what it left out (figures not drawn, missing points, skipped files)."""
    lines = [
        "# dlm_bench report",
        "",
        f"{runs} runs from {', '.join(map(str, dirs))}: " + ", ".join(f"{v} {k}" for k, v in sorted(made["counts"].items())),
        "",
        "## Files",
        "",
    ]
    for kind in ("results", "tables", "figures"):
        lines += [f"- {kind}: " + ", ".join(f"[{p.name}]({p.name})" for p in made[kind])] if made[kind] else []
    lines += ["", "## Figures not drawn", ""]
    lines += [f"- {m}" for m in made["not_drawn"]] or ["none"]
    lines += ["", "## Missing or unfinished points", ""]
    lines += [f"- {m}" for m in made["missing"]] or ["none"]
    lines += ["", "## Skipped run.json files", ""]
    lines += [f"- {path}: {why}" for path, why in made["skipped"]] or ["none"]
    lines += ["", "## Skipped curve.csv files", "", "(their runs are in the tables; their curves are not drawn)", ""]
    lines += [f"- {path}: {why}" for path, why in made["skipped_curves"]] or ["none"]
    (out / "index.md").write_text("\n".join(lines) + "\n")
    return out / "index.md"
