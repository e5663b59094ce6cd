"""One environment variable set for a block of code, then put back as it was.

A sweep tells its jobs things through the environment (the beta indices of the command line, its process id, the
--time-limit deadline): the local launcher's jobs run in the sweep's process, and joblib's workers inherit the
environment. After the sweep the variables must be as before, so that a second sweep in the same process (tests,
notebooks) does not see the first one's values.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def environ_set(name: str, value: str | None) -> Iterator[None]:
    """os.environ[name] = value inside the block (value None: leave the variable as it is); afterwards the
    variable has its earlier value again, or is unset if it was unset."""
    old = os.environ.get(name)
    if value is not None:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
