"""Sheth, Wang & Khardon (2015) Fig. 1 and supplement Fig. 1: contraction test of the FP operator (eq. 13).
One panel per likelihood x kernel, log10 ||T(U) - T(V)||_2 vs log10 ||U - V||_2, one colour per active-set size,
the line y = x; a table of the fraction of pairs with ratio > 1 (see dlm_bench/sggpm/contraction.py for the setup).

usage: python scripts/sggpm_fig1.py OUT_DIR [--reps 500] [--ell main|supp|FLOAT] [--n 1000] [--seed 0]
       [--m-at prior|mode] [--data all|active]
"""

import argparse
import csv
import platform
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dlm_bench.sggpm import contraction as C  # noqa: E402
import entry  # noqa: E402

KLABEL = {"se": "RBF", "matern12": "Matern-1/2", "poly2": "poly-2 (mean 1)"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--ell", default="main", help="main = sqrt(10)/3 (paper text), supp = sqrt(3) (supplement caption)")
    ap.add_argument("--n", type=int, default=1000, help="inputs per repetition (the active set is the first M)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--m-at", default="prior", choices=("prior", "mode"),
                    help="m fixed at the prior mean or at the Newton mode of the VLB at V = K_M")
    ap.add_argument("--data", default="all", choices=("all", "active"),
                    help="all: the n inputs are the data (paper); active: data on the active set only (SoD operator)")
    ap.add_argument("--poly-sf2", type=float, default=1.0, help="the polynomial kernel's sf^2 (the paper's is not printed)")
    a = ap.parse_args()
    ell = {"main": C.ELL_MAIN, "supp": C.ELL_SUPP}.get(a.ell) or float(a.ell)
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    rows = C.run(reps=a.reps, ell=ell, n=a.n, seed=a.seed, m_at=a.m_at, data=a.data, poly_sf2=a.poly_sf2,
                 progress=lambda r: print(f"rep {r + 1}/{a.reps}", flush=True) if (r + 1) % 50 == 0 else None)
    wall = time.time() - t0
    with open(a.out / "pairs.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["likelihood", "kernel", "M", "rep", "norm_UV", "norm_TUTV"])
        w.writerows(rows)
    summ = C.summary(rows)
    lines = [f"# contraction test: reps {a.reps}, n {a.n}, ell {ell:.6g}, seed {a.seed}, m at {a.m_at}, data {a.data}, poly sf2 {a.poly_sf2:g}, wall {wall:.1f} s, "
             f"{platform.node()}\n", "| likelihood | kernel | M | pairs | frac ratio > 1 | max ratio | median ratio |",
             "|---|---|---|---|---|---|---|"]
    for (lik, kern, M), (n, frac, mx, med) in summ.items():
        lines.append(f"| {lik} | {kern} | {M} | {n} | {frac:.3f} | {mx:.3g} | {med:.3g} |")
    (a.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    fig, axes = plt.subplots(len(C.LIKELIHOODS), len(C.KERNELS), figsize=(12, 10.5))
    colors = dict(zip(C.SIZES, ("tab:blue", "tab:orange", "tab:green", "tab:red")))
    for i, lik in enumerate(C.LIKELIHOODS):
        for j, kern in enumerate(C.KERNELS):
            ax = axes[i, j]
            lo, hi = np.inf, -np.inf
            for M in C.SIZES:
                pts = np.array([(r[4], r[5]) for r in rows if r[0] == lik and r[1] == kern and r[2] == M])
                x, y = np.log10(pts[:, 0]), np.log10(pts[:, 1])
                ax.scatter(x, y, s=5, color=colors[M], label=f"M={M}", alpha=0.6)
                lo, hi = min(lo, x.min(), y.min()), max(hi, x.max(), y.max())
            ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="y = x")
            ax.set_title(f"{lik}, {KLABEL[kern]}")
            ax.set_xlabel("log10 ||U - V||_2")
            ax.set_ylabel("log10 ||T(U) - T(V)||_2")
    axes[0, 0].legend(fontsize=7, markerscale=2)
    fig.suptitle(f"FP contraction test (eq. 13), m at {a.m_at}, data {a.data} (n = {a.n}), ell = {ell:.4g}, {a.reps} repetitions")
    fig.tight_layout()
    fig.savefig(a.out / "sggpm_fig1.png", dpi=100)
    print(f"wall {wall:.1f} s; wrote {a.out}/sggpm_fig1.png, table.md, pairs.csv")


if __name__ == "__main__":
    entry.run(main)
