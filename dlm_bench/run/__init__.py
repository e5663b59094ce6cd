"""The run harness: one path for every model kind (harness.execute), its run names (naming), the context a model
family gets (context.RunContext), the one record builder and writer (record), batched beta grids (batched),
SIGTERM (signals) and the progress line (progress). Imports only point down: registries, model families, leaves.
"""

from .harness import execute, validate_point
from .naming import config_dict, run_dir_for, run_name

__all__ = ["execute", "validate_point", "run_name", "run_dir_for", "config_dict"]
