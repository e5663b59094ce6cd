"""The allowed values of a setting, kept with its dataclass field (`ranged`, `at_least`, `one_of`) and checked by
config/schema.py check_domains before anything runs. A leaf with no dlm_bench import, so a paper's declaration
(dlm_bench/papers/) can give its config section range metadata without importing the schema."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Domain:
    """The allowed values of one numeric or text setting, kept with the field (`field(metadata={"domain": ...})`)
    and checked by one function, check_domains below, before anything runs. `message` is the
    error's text, formatted with `key` (section.name), `value` and `value!r`."""

    message: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # low < value (else low <= value)
    high_open: bool = False  # value < high (else value <= high)
    finite: bool = False  # nan and +-inf refused
    nullable: bool = False  # None allowed
    choices: tuple | None = None

    def allows(self, value) -> bool:
        if value is None:
            return self.nullable
        if self.choices is not None:
            return value in self.choices
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.finite and not math.isfinite(value):
            return False
        if math.isnan(value):
            return False
        if self.low is not None and not (self.low < value if self.low_open else self.low <= value):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)


POSITIVE = "{key} must be a finite number > 0, got {value}"
AT_LEAST = "{key} must be an integer >= {low}, got {value}"
AT_LEAST_OR_NULL = "{key} must be an integer >= {low} or null, got {value}"


def ranged(default, message: str = POSITIVE, **domain):
    """A dataclass field with its Domain; POSITIVE (finite, > 0) unless told otherwise."""
    if message == POSITIVE and not domain:
        domain = {"low": 0, "low_open": True, "finite": True}
    low = domain.get("low")
    return field(default=default, metadata={"domain": Domain(message.replace("{low}", f"{low:g}" if low is not None
                                                                             else ""), **domain)})


def at_least(default, low: int = 1, nullable: bool = False):
    return ranged(default, AT_LEAST_OR_NULL if nullable else AT_LEAST, low=low, nullable=nullable)


def one_of(default, choices: tuple, message: str):
    return ranged(default, message, choices=choices)
