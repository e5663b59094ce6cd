"""The one place in dlm_bench that touches Hydra's private API (`hydra._internal`).

Why private: Hydra's public entry point (`@hydra.main`) exits the process and drops the jobs' return values, which
the sweep's skipped / run / failed summary needs, and the public `compose` API cannot expand a sweep grid the way
the BasicSweeper does (the plan must list exactly the points the launch will run). A Hydra upgrade that moves these
names breaks only this module (pinned in pyproject.toml; tests/integration/test_sweep_real_runs.py compares the plan
against Hydra's own composition of every point).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def main_hydra() -> Iterator[object]:
    """A fresh `Hydra` object on conf/ (structured configs registered, version base 1.3); the global Hydra state is
    cleared before and after, so a later sweep or compose in this process starts clean."""
    from hydra import version
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path
    from hydra.core.global_hydra import GlobalHydra

    from ..config.schema import conf_dir, register_configs

    register_configs()
    version.setbase("1.3")
    GlobalHydra.instance().clear()
    try:
        yield Hydra.create_main_hydra2("dlm_bench", create_config_search_path(str(conf_dir())))
    finally:
        GlobalHydra.instance().clear()


def split_arguments(parsed: list) -> list[list[str]]:
    """The grid points (each a list of overrides) Hydra's BasicSweeper makes of parsed overrides, in its order."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

    return [list(point) for batch in BasicSweeper.split_arguments(parsed, None) for point in batch]
