"""Report stage: run.json files -> results.parquet, tables, figures, index.md."""

from .build import build_report, missing_points
from .collect import collect
from .layouts import SPECS
from .spec_types import FigureSpec, MethodSpec, TableSpec

__all__ = ["SPECS", "FigureSpec", "MethodSpec", "TableSpec", "build_report", "collect", "missing_points"]
