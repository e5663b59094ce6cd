"""Sheth & Khardon (2016) supplement Fig. 2: gamma_i vs FP update number for GLM-logistic with m fixed at m* (the
FPi optimum) and V0 = I, where the FP update on V ends in a 2-cycle (Theorem 1(1)). Records gamma of every point for
--updates updates (lgm/fpdiag.fp_trace), flags the points that 2-cycle (two_cycle_mask: over the last 3 updates
|gamma_t - gamma_{t-2}| <= 1e-3 |gamma_t - gamma_{t-1}|, gap >= 1e-6) and plots the chosen indices.

Indices are 1-based like the paper's (MATLAB) 3591, 6311, 10301 of 19085; our wlan_inout_fp row order need not be
theirs. --indices auto: the three flagged points with the largest gap (smoke; if none is flagged, the three largest
gaps). Writes gamma.csv (update, index, gamma),
summary.json and fp_supp2.png.

usage: python scripts/fp_supp2.py OUT_DIR [--dataset wlan_inout_fp] [--indices 3591,6311,10301|auto] [--updates 60]
   smoke: python scripts/fp_supp2.py OUT_DIR --dataset synthetic_wlan --indices auto
"""

import argparse
import json
import platform
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from dlm_bench.lgm import fpdiag  # noqa: E402
from dlm_bench.lgm.optim import optimise  # noqa: E402
import entry  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--dataset", default="wlan_inout_fp")
    ap.add_argument("--indices", default="3591,6311,10301", help="1-based, comma-separated, or auto")
    ap.add_argument("--updates", type=int, default=60, help="FP updates traced (at least 5: the last two are compared)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.updates < 5:
        ap.error(f"--updates must be at least 5, got {a.updates}")
    a.out.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.time(), time.process_time()
    model, _, hyp = fpdiag.model_from_dataset(a.dataset, "lgm_glm", seed=a.seed, likelihood="logistic")
    n = model.n
    res = optimise(model, "fpi", torch.zeros(n, dtype=torch.float64), torch.eye(n, dtype=torch.float64))
    recs, _ = fpdiag.fp_trace(model, res.m, fpdiag.cov_scaled_identity(n, 1.0), a.updates)  # V0 = I, m = m*
    G = np.stack([r["gamma"].numpy() for r in recs])
    mask = fpdiag.two_cycle_mask(G)
    gap = np.abs(G[-1] - G[-2])
    if a.indices == "auto":
        cand = np.flatnonzero(mask)
        if cand.size == 0:  # no point 2-cycles within these updates: show the ones still moving most, not an empty plot
            cand = np.arange(n)
        idx = cand[np.argsort(-gap[cand])][:3]
    else:
        idx = np.array([int(i) - 1 for i in a.indices.split(",")])
    fig, ax = plt.subplots(figsize=(6, 4))
    for i in idx:
        ax.plot(np.arange(1, a.updates + 1), G[:, i], marker=".", ms=3, lw=0.8,
                label=f"i = {i + 1}{' (2-cycle)' if mask[i] else ''}")
    ax.set_xlabel("FP update")
    ax.set_ylabel("gamma_i")
    ax.set_title(f"supp. Fig. 2: {a.dataset} (N = {model.N}, D = {n}), m = m*, V0 = I", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out / "fp_supp2.png", dpi=110)
    with open(a.out / "gamma.csv", "w") as f:
        f.write("update,index,gamma\n")
        for i in idx:
            for t in range(a.updates):
                f.write(f"{t + 1},{i + 1},{G[t, i]:.10g}\n")
    summary = {"dataset": a.dataset, "N": model.N, "D": n, "updates": a.updates, "fpi_iterations": res.iterations,
               "fpi_stop": res.reason, "vlb_star": res.vlb, "two_cycling_points": int(mask.sum()),
               "indices": [int(i + 1) for i in idx], "index_two_cycles": [bool(mask[i]) for i in idx],
               "index_gap_last": [float(gap[i]) for i in idx],
               "index_gamma_last_two": [[float(G[-2, i]), float(G[-1, i])] for i in idx],
               "max_gap_all": float(gap.max()), "wall_s": time.time() - t0, "cpu_s": time.process_time() - c0,
               "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
               "date": time.strftime("%Y-%m-%d")}
    (a.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary))


if __name__ == "__main__":
    entry.run(main)
