"""The run harness: one path for every model kind (harness.execute), its run names (naming), the context a model
family gets (context.RunContext), the one record builder and writer (record), the harness's part of batched beta
grids (batched), SIGTERM (signals) and the progress line (record.progress). Imports only point down: registries and
leaves; a model family is reached only through its ModelSpec (execute, task_defaults, name_defaults, beta_group),
and no Hydra state is read here (a sweep job passes its overrides and beta indices in: sweeps/compose.py).

The names below are loaded on first use (PEP 562): importing a light submodule (run.threads, run.naming) must not
load the harness and with it torch and gpytorch (`dlm-bench --help` and `datasets` import run.threads).
"""

from importlib import import_module

_WHERE = {"execute": ".harness", "validate_point": ".harness", "run_name": ".naming", "run_dir_for": ".naming",
          "config_dict": ".naming"}
__all__ = ["execute", "validate_point", "run_name", "run_dir_for", "config_dict"]


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value
