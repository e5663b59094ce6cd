"""The papers dlm_bench reproduces, each declared once (dlm_bench/papers/), and found by discovery: nothing central
lists them. This module is the declaration's class and the discovery; it sits in config/ (a leaf) because the config
schema, the results labels, the registry and the report all read the declarations.

A paper declares a `PAPER = Paper(...)` object: its model kinds (ModelSpecs, config/capabilities.py), the config
sections only its models read (name -> the dataclass with range metadata, kept in its declaration or config/schema.py),
and its report layout file (YAML, report/layout_files.py), and config options kept outside conf/ (`conf`: a paper not shipped with
dlm_bench; the shipped ones keep theirs in conf/). The registries read these: registry/models.py (MODELS), config/schema.py
(Config's sections), report/layouts.py (SPECS).

Where declarations are found:
- every module of the package dlm_bench.papers (dlm.py, pac.py, fp.py, sggpm.py, savigp.py: the five shipped papers);
- the modules named in the environment variable DLM_BENCH_PAPERS (comma separated, importable from sys.path);
- the entry points of the group `dlm_bench.papers` of installed distributions (a paper shipped as its own package).

A declaration is light: it imports no torch, so listing the papers (--help, `dlm-bench experiments`, run names of
finished runs) loads no model code. A plugin's functions are dotted names ('package.module:function', Dotted),
imported the first time a run calls them.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path

from .capabilities import ModelSpec
from ..errors import ConfigError

ENV = "DLM_BENCH_PAPERS"
GROUP = "dlm_bench.papers"
SHIPPED = "dlm_bench.papers"  # the package of the shipped declarations


@dataclass(frozen=True)
class Dotted:
    """A function named 'package.module:function', imported on its first call (keeps declarations torch-free)."""

    target: str

    def resolve(self):
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)


@dataclass(frozen=True)
class Paper:
    name: str  # the paper key (run.json `paper`, `dlm-bench report --paper`)
    models: tuple[ModelSpec, ...] = ()
    sections: dict = field(default_factory=dict)  # config section -> 'module:Dataclass' (range metadata on its fields)
    layouts: Path | None = None  # its report layouts (YAML)
    conf: Path | None = None  # a folder like conf/ (model/, experiment/, ...) of options outside the shipped conf/


def _declaration_modules() -> list[str]:
    shipped = importlib.import_module(SHIPPED)  # by name: the declarations import this module, not the reverse
    names = [f"{SHIPPED}.{m.name}" for m in pkgutil.iter_modules(shipped.__path__)]
    names += [n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()]
    names += [ep.value for ep in entry_points(group=GROUP)]
    return names


@lru_cache(maxsize=None)
def papers() -> dict[str, Paper]:
    """Every declared paper by name, in discovery order (the shipped ones first, alphabetically)."""
    out: dict[str, Paper] = {}
    for module in _declaration_modules():
        try:
            paper = importlib.import_module(module.partition(":")[0]).PAPER
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"paper declaration {module!r} ({ENV} or entry point {GROUP}): {exc}") from None
        if paper.name in out:
            raise ConfigError(f"paper {paper.name!r} is declared twice ({module})")
        out[paper.name] = paper
    return out


def model_specs() -> list[ModelSpec]:
    return [spec for paper in papers().values() for spec in paper.models]


def config_sections() -> dict[str, type]:
    """Every paper's own config sections: name -> dataclass (imported from its dotted name)."""
    out: dict[str, type] = {}
    for paper in papers().values():
        for section, target in paper.sections.items():
            if section in out:
                raise ConfigError(f"config section {section!r} is declared by two papers ({paper.name})")
            out[section] = Dotted(target).resolve() if isinstance(target, str) else target
    return out


def conf_files(group: str) -> dict[str, Path]:
    """Config group options (option -> YAML file) that papers keep in their own `conf` folder."""
    return {path.stem: path for paper in papers().values() if paper.conf is not None
            for path in sorted((paper.conf / group).glob("*.yaml"))}


def layout_files() -> list[Path]:
    return [paper.layouts for paper in papers().values() if paper.layouts is not None]
