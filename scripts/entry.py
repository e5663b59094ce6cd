"""How every script in scripts/ ends: like `dlm-bench` (dlm_bench/cli.py main). A user error (a bad config value, a
dataset that is not here, a missing file) is one line `<script>: error: ...` and exit 2; Ctrl-C is exit 130, SIGTERM
143; anything else is one `internal error` line and exit 1 (DLM_BENCH_DEBUG=1 shows the traceback). A script ends
with `entry.run(main)` instead of calling main itself, so a moved import or a missing data set is one line, not a
traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

USAGE_EXIT = 2


def user_errors() -> tuple[type, ...]:
    """The exceptions `dlm-bench` prints as one line with exit 2 (imported late: a script's --help stays light)."""
    from dlm_bench.cli import UserError
    from dlm_bench.config.beta_grid import OutsideBetaGrid
    from dlm_bench.data.datasets import DatasetError
    from dlm_bench.errors import ConfigError
    from dlm_bench.report.collect import ReportError

    return UserError, ConfigError, DatasetError, OutsideBetaGrid, ReportError, FileNotFoundError


def one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def run(main, *args) -> None:
    """Call main(*args) and exit with its status (an int it returns, else 0), errors as `dlm-bench` prints them."""
    prog = Path(sys.argv[0]).name
    try:
        rc = main(*args)
    except KeyboardInterrupt as err:
        from dlm_bench.errors import Terminated

        terminated = isinstance(err, Terminated)
        print(f"{prog}: {'terminated (SIGTERM)' if terminated else 'interrupted'}", file=sys.stderr)
        sys.exit(143 if terminated else 130)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)
    except Exception as err:
        if isinstance(err, user_errors()):
            print(f"{prog}: error: {one_line(err)}", file=sys.stderr)
            sys.exit(USAGE_EXIT)
        if os.environ.get("DLM_BENCH_DEBUG"):
            raise
        print(f"{prog}: internal error: {type(err).__name__}: {one_line(err)} (set DLM_BENCH_DEBUG=1 for a traceback)",
              file=sys.stderr)
        sys.exit(1)
    sys.exit(rc if isinstance(rc, int) and not isinstance(rc, bool) else 0)
