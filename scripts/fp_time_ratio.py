"""CPU seconds each optimiser needs to reach within `rel` of VLB* (the best final VLB of the panel), per panel
of an FP experiment's results directory, and the GRAD / FPi ratio (Sheth & Khardon 2016, the claim of sec. 4).

usage: python scripts/fp_time_ratio.py results/fp_fig2_smoke [--rel 1e-3]
"""

import argparse
import json
from pathlib import Path

import pandas as pd
import entry  # noqa: E402


def time_to_reach(curve: pd.DataFrame, f_star: float, rel: float):
    ok = curve[(curve["objective"] - f_star).abs() <= rel * abs(f_star)]
    return float(ok["cpu_s"].iloc[0]) if len(ok) else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", type=Path)
    ap.add_argument("--rel", type=float, default=1e-3)
    a = ap.parse_args()
    runs = []
    for p in sorted(a.results.glob("*/run.json")):
        rec = json.loads(p.read_text())
        if rec["status"] == "ok":
            # the optimiser: lgm.optimizer (run.json's `objective` is "vlb" for every LGM run since the run harness
            # refactor; older records carried the optimiser there)
            opt = rec.get("config", {}).get("lgm", {}).get("optimizer") or rec["objective"]
            runs.append((rec["dataset"], opt, rec, pd.read_csv(p.parent / "curve.csv")))
    print(f"| dataset | f* = -VLB* | optimiser | final -VLB | iterations | CPU s total | CPU s to 1e-3 of f* |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for ds in sorted({r[0] for r in runs}):
        panel = [r for r in runs if r[0] == ds]
        f_star = min(-r[2]["metrics"]["vlb"] for r in panel)
        t = {}
        for _, opt, rec, curve in sorted(panel, key=lambda r: r[1]):
            t[opt] = time_to_reach(curve, f_star, a.rel)
            print(f"| {ds} | {f_star:.6g} | {opt} | {-rec['metrics']['vlb']:.10g} | {rec['train']['iterations']} | "
                  f"{rec['train']['cpu_s']:.3f} | {'never' if t[opt] is None else f'{t[opt]:.4f}'} |")
        if t.get("fpi") and "grad" in t:
            g = t["grad"]
            grad_cpu = next(r[2]["train"]["cpu_s"] for r in panel if r[1] == "grad")
            ratios.append((ds, f"{g / t['fpi']:.1f}" if g is not None else f"> {grad_cpu / t['fpi']:.1f} (GRAD never within the run)"))
    print("\nGRAD / FPi CPU time to reach 1e-3 relative of VLB*:")
    for ds, r in ratios:
        print(f"  {ds}: {r}")


if __name__ == "__main__":
    entry.run(main)
