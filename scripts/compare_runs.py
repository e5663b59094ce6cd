"""Compare two results folders run by run: same run directory names, every metric equal (timings excluded).

The before/after check of a refactor (issue 56): `scripts/six_run_check.sh A` on the old tree, `... B` on the new one,
then `python scripts/compare_runs.py A B`. Exit 1 on any difference."""
import argparse
import json
import math
import pathlib

import entry

TIMING = ("wall", "cpu_s")


def load(root: pathlib.Path) -> dict:
    return {p.parent.name: json.loads(p.read_text()) for p in root.rglob("run.json")}


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=pathlib.Path)
    ap.add_argument("b", type=pathlib.Path)
    args = ap.parse_args(argv)
    for root in (args.a, args.b):
        if not root.is_dir():
            raise FileNotFoundError(f"no such results folder: {root}")
    ra, rb = load(args.a), load(args.b)
    bad = 0
    if set(ra) != set(rb):
        print("run names differ:", sorted(set(ra) ^ set(rb)))
        bad += 1
    for name in sorted(set(ra) & set(rb)):
        ma, mb = ra[name]["metrics"], rb[name]["metrics"]
        keys = [k for k in sorted(set(ma) | set(mb)) if not any(t in k for t in TIMING)]
        diff = [k for k in keys if not same(ma.get(k), mb.get(k))]
        status = "equal" if not diff and ra[name]["status"] == rb[name]["status"] else f"DIFFER {diff}"
        bad += status != "equal"
        print(f"{name}: {len(keys)} metrics {status}")
    print(f"{len(ra)} vs {len(rb)} runs, {bad} difference(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    entry.run(main)
