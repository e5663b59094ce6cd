"""`dlm-bench report`: the command's body (cli.py parses the command line and dispatches here): the results
directories checked, build_report run, what it made listed. Errors of the command line are UserErrors (one line,
exit 2)."""

from __future__ import annotations

from ..errors import UserError


def report_command(args) -> int:
    """`dlm-bench report DIR...`: what build_report made, one line each; exit 0, or 2 for a user error."""
    from pathlib import Path

    from . import build_report
    from .collect import ReportError

    baselines = list(args.baseline or [])
    dirs = []
    for d in args.dirs:  # report.baseline=LABEL, in the sweep's key=value spelling, is --baseline LABEL
        if d.startswith("report.baseline=") and not Path(d).exists():
            baselines.append(d.split("=", 1)[1])
        else:
            dirs.append(d)
    if not dirs:  # a missing directory is build_report's ReportError (collect.check_input), before anything is written
        raise UserError("no results directory given")
    out = Path(args.out) if args.out else Path(dirs[0]) / "report"
    try:
        made = build_report(dirs, out, paper=args.paper, baseline=baselines or None)
    except (ReportError, FileNotFoundError) as err:
        raise UserError(str(err)) from err
    counts = ", ".join(f"{v} {k}" for k, v in sorted(made["counts"].items()))
    print(f"report: {made['runs']} runs ({counts}) -> {out}")
    for p in made["tables"] + made["figures"]:
        print(f"  {p}")
    print(f"  {made['index']} ({len(made['missing'])} missing or unfinished points listed)")
    print(f"  {made['html']} (every table and figure on one page)")
    if made["skipped"]:
        print(f"  skipped {len(made['skipped'])} unusable run.json (listed in index.md)")
    if made.get("skipped_curves"):
        print(f"  skipped {len(made['skipped_curves'])} unusable curve.csv (listed in index.md)")
    for line in made["not_drawn"]:
        print(f"  not drawn: {line}")
    return 0
