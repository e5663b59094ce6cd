"""Sheth & Khardon (2016) Fig. 1(a) and supplement Fig. 1: sign of d gamma / d v on a 200 x 200 (m, v) grid,
gamma = -2 dE/dv by 1000-node Gauss-Hermite (Laplace: closed form), d/dv by central differences (delta = 1e-6).
Condition 2a (gamma non-decreasing in v) holds where the map is +1, 2b where it is -1.

usage: python scripts/fp_fig1.py OUT_DIR [--grid 200]
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from dlm_bench.lgm import make_site  # noqa: E402

PANELS = {  # (site, y, m range, v range) as in the paper / supplement
    "logistic": (dict(name="logistic", num_nodes=1000), 1.0, (-20, 20), (1e-3, 100)),
    "student_t": (dict(name="student_t", num_nodes=1000), 0.0, (-20, 20), (1e-3, 100)),
    "laplace": (dict(name="laplace"), 0.0, (-20, 20), (1e-3, 100)),
    "poisson": (dict(name="poisson"), 3.0, (-5, 2), (1e-3, 10)),
}


def sign_map(site, y, m, v, delta=1e-6):
    M, Vv = np.meshgrid(m, v)
    mm, vv = torch.as_tensor(M.ravel()), torch.as_tensor(Vv.ravel())
    yy = torch.full_like(mm, y)
    gp = -site.site_expectations(yy, mm, vv + delta)[2]
    gm = -site.site_expectations(yy, mm, vv - delta)[2]
    return np.sign(((gp - gm) / (2 * delta)).numpy()).reshape(M.shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--grid", type=int, default=200)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(PANELS), figsize=(4.2 * len(PANELS), 3.6))
    for ax, (name, (kw, y, mr, vr)) in zip(axes, PANELS.items()):
        kw = dict(kw)
        site = make_site(kw.pop("name"), **kw)
        m, v = np.linspace(*mr, a.grid), np.linspace(*vr, a.grid)
        S = sign_map(site, y, m, v)
        ax.imshow(S, origin="lower", extent=(*mr, *vr), aspect="auto", cmap="coolwarm", vmin=-1, vmax=1)
        ax.set_title(f"{name} (y = {y:g}): sign d gamma / dv")
        ax.set_xlabel("m")
        ax.set_ylabel("v")
        print(f"{name}: fraction of grid with d gamma/dv > 0: {(S > 0).mean():.3f}, < 0: {(S < 0).mean():.3f}")
    fig.tight_layout()
    fig.savefig(a.out / "fp_fig1.png", dpi=110)


if __name__ == "__main__":
    main()
