"""The sweep's Hydra: the multirun (launch) and the grid expansion its plan shares with it; the one place in
dlm_bench that touches Hydra's private API (`hydra._internal`). Composition for one run, the override grammar and
Hydra's error wording live in sweeps/compose.py.

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

    from ..config.schema import conf_dir
    from .compose import register_configs

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


def multirun(overrides: list[str], task_function) -> list:
    """Hydra's multirun of conf/ with `overrides`: every grid point's job, as batches of JobReturns.

    Hydra's sweeper composes every job of a batch once before launching it (Sweeper.validate_batch_is_legal; its
    comment: "can be a bit slow for large jobs"), and the launcher composes each job again to run it. `dlm-bench
    sweep` plans first (plan.py): every point composed and validated, the same composition as Hydra's
    (test_sweep_real_runs.py), so that first pass is skipped here. It cost 0.3-0.6 s a point: minutes before a
    paper-size grid's first job, and a third of a tiny sweep's wall."""
    from hydra.plugins.sweeper import Sweeper

    checked = Sweeper.validate_batch_is_legal
    Sweeper.validate_batch_is_legal = lambda self, batch: None
    try:
        with main_hydra() as hydra:
            return hydra.multirun(config_name="config", task_function=task_function, overrides=overrides)
    finally:
        Sweeper.validate_batch_is_legal = checked


def expand(hydra, overrides: list[str], leave_out=lambda key: False):
    """(master config, override parser, every grid point's overrides in BasicSweeper order, the swept keys):
    hydra.sweeper.params of the composed config (less the keys `leave_out` names), then the command line."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    master = hydra.compose_config("config", overrides, run_mode=RunMode.MULTIRUN, with_log_configuration=False)
    params = [f"{k}={v}" for k, v in (master.hydra.sweeper.get("params") or {}).items() if not leave_out(k)]
    params += list(OmegaConf.to_container(master.hydra.overrides.task, resolve=False))
    parser = OverridesParser.create(config_loader=hydra.config_loader)
    parsed = parser.parse_overrides(params)
    return master, parser, split_arguments(parsed), {o.get_key_element() for o in parsed if o.is_sweep_override()}


def experiment_params(overrides: list[str]) -> dict:
    """The sweeper params (hydra.sweeper.params) of the experiment the overrides name, composed from it alone."""
    from hydra.types import RunMode

    chosen = [o for o in overrides if o.partition("=")[0].lstrip("+~") == "experiment"]
    with main_hydra() as hydra:
        master = hydra.compose_config("config", chosen, run_mode=RunMode.MULTIRUN, with_log_configuration=False)
        return dict(master.hydra.sweeper.get("params") or {})
