"""Errors shared by the runner and the method dispatch."""


class ConfigError(ValueError):
    """A config value that composes but makes no sense (one line, exit 2)."""
