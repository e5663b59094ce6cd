"""Report layouts are data: each paper's YAML file (its `layouts`, dlm_bench/papers/) read into the dataclasses of
layouts.py, which stay the schema. An unknown kind, an unknown or missing field, or a bad value is a LayoutError
of one line naming the file; a layout never reaches the report half-read."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from ..errors import ConfigError
from ..config.papers import Dotted, layout_files
from . import paper_values
from .spec_types import (
    CurveSpec,
    ExternalSpec,
    FigureSpec,
    MethodSpec,
    PairedSpec,
    PredictiveComparisonSpec,
    PredictiveSpec,
    TableSpec,
)

KINDS = {"figure": FigureSpec, "curve": CurveSpec, "table": TableSpec, "paired": PairedSpec, "predictive": PredictiveSpec,
         "predictive_comparison": PredictiveComparisonSpec, "external": ExternalSpec}


class LayoutError(ConfigError):
    """A report layout file that does not fit the schema (one line, exit 2)."""


def load_layouts(path: Path) -> dict[str, tuple]:
    """{report key: its specs} of one layout file."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise LayoutError(f"{path}: not YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(doc, dict) or set(doc) != {"reports"} or not isinstance(doc["reports"], dict):
        raise LayoutError(f"{path}: expected one top-level mapping `reports:` {{report key: [layout, ...]}}")
    out = {}
    for key, entries in doc["reports"].items():
        if not isinstance(entries, list) or not entries:
            raise LayoutError(f"{path}: reports.{key} must be a non-empty list of layouts")
        out[str(key)] = tuple(_spec(entry, f"{path}: reports.{key}[{i}]") for i, entry in enumerate(entries))
    return out


def _spec(entry, where: str):
    if not (isinstance(entry, dict) and len(entry) == 1):
        raise LayoutError(f"{where}: expected {{kind: {{field: value}}}} with kind one of {', '.join(KINDS)}")
    (kind, fields), = entry.items()
    if kind not in KINDS:
        raise LayoutError(f"{where}: unknown kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    return _build(KINDS[kind], fields, f"{where}.{kind}")


def _build(cls, fields, where: str):
    if not isinstance(fields, dict):
        raise LayoutError(f"{where}: expected a mapping of {cls.__name__} fields, got {fields!r}")
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(fields) - set(known))
    if unknown:
        raise LayoutError(f"{where}: unknown field {unknown[0]!r}; {cls.__name__} fields: {', '.join(known)}")
    missing = [n for n, f in known.items() if n not in fields and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise LayoutError(f"{where}: missing field {missing[0]!r} of {cls.__name__}")
    try:
        return cls(**{name: _value(cls, name, known[name].type, value, f"{where}.{name}")
                      for name, value in fields.items()})
    except (TypeError, ValueError) as exc:
        raise LayoutError(f"{where}: {exc}") from None


def _value(cls, name: str, annotation: str, value, where: str):
    """One field's YAML value as the dataclass holds it: lists as tuples, methods as MethodSpecs, `where` as
    (column, value) pairs in file order, a `reference` as the published table of that name, `build` as a Dotted
    name (config/papers.py: imported when a report is drawn, so reading the layouts imports no paper code)."""
    if cls is MethodSpec and name == "where":
        if not isinstance(value, dict):
            raise LayoutError(f"{where}: expected a mapping {{run column: value}}, got {value!r}")
        return tuple(value.items())
    if name == "methods":
        if not isinstance(value, list):
            raise LayoutError(f"{where}: expected a list of methods, got {value!r}")
        return tuple(_build(MethodSpec, m, f"{where}[{i}]") for i, m in enumerate(value))
    if name in ("method", "overlay"):
        return _build(MethodSpec, value, where)
    if cls is TableSpec and name == "reference":
        try:
            return paper_values.table(value)
        except KeyError:
            raise LayoutError(f"{where}: no published table {value!r} in {paper_values.CSV.name}") from None
    if cls is ExternalSpec and name == "build":
        if not (isinstance(value, str) and ":" in value):
            raise LayoutError(f"{where}: expected 'package.module:function', got {value!r}")
        return Dotted(value)
    if annotation.startswith("tuple"):
        if not isinstance(value, list):
            raise LayoutError(f"{where}: expected a list, got {value!r}")
        return tuple(value)
    return value


def all_layouts() -> dict[str, tuple]:
    """{report key: its specs} over every paper; a key declared by two files is refused (one line, both files)."""
    out: dict[str, tuple] = {}
    origin: dict[str, Path] = {}
    for path in layout_files():
        for key, specs in load_layouts(path).items():
            if key in out:
                raise LayoutError(f"report key {key!r} is declared by both {origin[key]} and {path}")
            out[key], origin[key] = specs, path
    return out
