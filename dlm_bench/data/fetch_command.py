"""`dlm-bench fetch`: the command's body (cli.py parses the command line and dispatches here): the names checked,
datasets fetched or re-verified, one line per dataset. Errors of the command line are UserErrors (one line, exit 2)."""

from __future__ import annotations

from ..errors import USAGE_EXIT, UserError


def fetch_command(args) -> int:
    """`dlm-bench fetch NAME... | --all | --verify`: exit 0, 1 (a verify mismatch), 2 (a failed fetch, a user error)."""
    from . import DATASETS, fetch
    from .fetch import verify

    if not args.all and not args.names and not args.verify:
        raise UserError("name datasets to fetch, or --all (dlm-bench datasets lists them)")
    if args.verify and args.force:
        raise UserError("--verify checks the cache and --force re-fetches: use one at a time")
    unknown = [n for n in args.names if n not in DATASETS]
    if unknown:
        raise UserError(f"unknown dataset {unknown[0]!r}; valid choices: {', '.join(sorted(DATASETS))}")
    if args.verify:
        results = verify(args.names or "all")
        for name, ok, message in results:
            print(f"{'ok  ' if ok else 'FAIL'} {name:16s} {message}", flush=True)
        failed = sum(not ok for _, ok, _ in results)
        print(f"verify: {len(results) - failed} ok, {failed} failed" if results else "verify: nothing cached")
        return 1 if failed else 0
    results = fetch("all" if args.all else args.names, force=args.force, large=args.large)
    failed = [name for name, ok, _ in results if not ok]
    if len(results) == 1 and failed:
        raise UserError(results[0][2])
    for name, ok, message in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name:16s} {message}", flush=True)
    if len(results) > 1:
        print(f"{len(results) - len(failed)} fetched, {len(failed)} failed")
    return USAGE_EXIT if failed else 0
