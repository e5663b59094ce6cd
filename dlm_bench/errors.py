"""Errors shared across layers (a leaf: imports nothing from dlm_bench)."""


class ConfigError(ValueError):
    """A config value that composes but makes no sense (one line, exit 2)."""


class NotApplicable(ConfigError):
    """A grid point the paper does not have (e.g. SGGPM's dual method on ordinal data): one line and exit 2 for
    `dlm-bench run`; its own `not_applicable` outcome in a sweep (not a failure, nothing written)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (timeout, kill, SLURM's scancel) turned into an exception, so the sweep can clean up."""


class OutOfRequeues(Terminated):
    """A SLURM job warned of its time limit that submitit did not requeue (launcher.max_requeues reached): the run
    stops with its checkpoint saved and no run.json (the next sweep resumes it); a sweep counts it as deferred."""


class TimeLimitReached(Terminated):
    """The sweep's --time-limit came while a checkpointing run trained (sweeps/deadline.py stop_at_deadline): the
    run stopped at the end of an iteration with its checkpoint saved and no run.json; a sweep counts it as deferred
    and the same command resumes it."""


class ResultsNotWritten(RuntimeError):
    """A finished run whose run directory could not be written; its files went to the fallback place the message
    names (`<results_dir>/.rescued/<run name>/`, else the temp directory). One line, exit 1."""


class UserError(Exception):
    """A mistake on the command line (a key, a value, a combination): printed by the CLI as one line, exit 2."""


USAGE_EXIT = 2  # the exit status of a UserError (and of argparse's usage errors)
