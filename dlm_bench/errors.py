"""Errors shared across packages (runner, methods, data, sweep)."""


class ConfigError(ValueError):
    """A config value that composes but makes no sense (one line, exit 2)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (timeout, kill, SLURM's scancel) turned into an exception, so the sweep can clean up."""
