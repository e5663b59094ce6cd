"""Write index.html into every committed report folder under docs/reproductions/ that has runs (*runs*.tgz) or an
index.md and no index.html yet, from the folder's own tables and PNGs (dlm_bench/report/html.py page_for_folder;
figures linked, not embedded: the PNGs stay the only copy). The committed tables are only read.

    .venv/bin/python scripts/reproduction_pages.py [--all] [--root DIR]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dlm_bench.report.html import page_for_folder

ROOT = Path(__file__).resolve().parent.parent / "docs" / "reproductions"


def report_folders(root: Path = ROOT) -> list[Path]:
    """Folders of committed reports: their runs are archived beside them, or `dlm-bench report` wrote index.md."""
    return sorted(d for d in root.iterdir() if d.is_dir() and (any(d.glob("*runs*.tgz")) or (d / "index.md").is_file()))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--all", action="store_true", help="rewrite existing index.html pages too")
    p.add_argument("--root", type=Path, default=ROOT, help="the folder of report folders (default: docs/reproductions)")
    args = p.parse_args(argv)
    if not args.root.is_dir():
        p.error(f"--root {args.root}: no such folder")
    for folder in report_folders(args.root):
        if args.all or not (folder / "index.html").exists():
            page = page_for_folder(folder)
            print(f"{page}  {page.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
