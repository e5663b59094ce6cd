"""Sheth & Khardon (2016) Fig. 1(a) and supplement Fig. 1: sign of d gamma / d v on a 200 x 200 (m, v) grid,
gamma = -2 dE/dv by 1000-node Gauss-Hermite (Laplace: closed form), d/dv by central differences (delta = 1e-6).
Condition 2a (gamma non-decreasing in v) holds where the map is +1, 2b where it is -1.

Fig. 1(b)(c) (fp_fig1_bc.png): the (m_qi, v_qi) of every data point at the beginning of the 2nd FP update of FPi
(one damped Newton step on m, then V <- T(V), from m = 0, V0 = I; the 2nd update's gamma is evaluated at m after two
Newton steps and V = T(V0)), over a zoomed logistic sign map, for one GLM and one full GP (--gp-subsample rows).
The map is drawn for y = +1; a point with y = -1 is drawn at (-m_qi, v_qi), since sigma(y f) makes its gamma that of
y = +1 at -m. Defaults: GLM panels on the offline binary `banana` (D = 2) and on the generated `synthetic_wlan` (2000 x 200,
lgm/fpdiag.py), GP panel on a 500-row subsample of `banana`; comma-separated lists give one panel each.

usage: python scripts/fp_fig1.py OUT_DIR [--grid 200] [--no-scatter] [--glm-dataset banana,synthetic_wlan]
       [--gp-dataset banana] [--gp-subsample 500]
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from dlm_bench.lgm import fpdiag  # noqa: E402
from dlm_bench.gpmath.sites import make_site  # noqa: E402
import entry  # noqa: E402

PANELS = {  # (site, y, m range, v range) as in the paper / supplement
    "logistic": (dict(name="logistic", num_nodes=1000), 1.0, (-20, 20), (1e-3, 100)),
    "student_t": (dict(name="student_t", num_nodes=1000), 0.0, (-20, 20), (1e-3, 100)),
    "laplace": (dict(name="laplace"), 0.0, (-20, 20), (1e-3, 100)),
    "poisson": (dict(name="poisson"), 3.0, (-5, 2), (1e-3, 10)),
}


def dgamma_dv_sign(site, y, m, v, delta):
    """Sign of d gamma / dv at (m, v) by central differences of gamma = -2 dE/dv (delta > 0: the scale drops out)."""
    gp = -site.site_expectations(y, m, v + delta)[2]
    gm = -site.site_expectations(y, m, v - delta)[2]
    return np.sign((gp - gm).numpy())


def sign_map(site, y, m, v, delta=1e-6):
    M, Vv = np.meshgrid(m, v)
    mm, vv = torch.as_tensor(M.ravel()), torch.as_tensor(Vv.ravel())
    return dgamma_dv_sign(site, torch.full_like(mm, y), mm, vv, delta).reshape(M.shape)


def second_update_points(name, kind, subsample, seed=0, **lgm):
    """(y_i m_qi, v_qi, exact sign of d gamma_i / dv at the point) at the beginning of FPi's 2nd FP update. `lgm`:
    LgmConfig overrides (e.g. outputscale=0.25)."""
    model, v0, _ = fpdiag.model_from_dataset(name, kind, subsample=subsample, seed=seed, **lgm)
    n = model.n
    recs, _ = fpdiag.fp_trace(model, torch.zeros(n, dtype=torch.float64), fpdiag.cov_scaled_identity(n, v0), 2,
                              newton=True)
    r = recs[1]
    ym, v = (model.y * r["mq"]).numpy(), r["vq"].numpy()
    vt = torch.as_tensor(v)
    sign = dgamma_dv_sign(make_site("logistic", num_nodes=1000), torch.ones_like(vt), torch.as_tensor(ym), vt,
                          torch.as_tensor(1e-6 * np.maximum(1.0, v)))
    return ym, v, sign, model


def scatter_panels(a):
    panels = [("(b) GLM", g, "lgm_glm", None, None) for g in a.glm_dataset.split(",") if g]
    scales = [None] if not a.gp_outputscale else [float(v) for v in a.gp_outputscale.split(",")]
    panels += [("(c) GP", g, "lgm_gp", a.gp_subsample, sf2) for g in a.gp_dataset.split(",") for sf2 in scales]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.2))
    site = make_site("logistic", num_nodes=1000)
    for ax, (lab, name, kind, sub, sf2) in zip(np.atleast_1d(axes), panels):
        ym, v, sg, model = second_update_points(name, kind, sub, **({} if sf2 is None else {"outputscale": sf2}))
        lab = lab if sf2 is None else f"{lab}, sf^2 = {sf2:g}"
        lo, hi = np.quantile(ym, [0.0, 1.0])
        pad = 0.1 * (hi - lo) + 0.5
        mr = (lo - pad, hi + pad)
        vr = (0.0, v.max() * 1.15 + 1e-3)
        m, vv = np.linspace(*mr, a.grid), np.linspace(1e-3 * vr[1], vr[1], a.grid)
        S = sign_map(site, 1.0, m, vv, delta=min(1e-6, 1e-3 * (vr[1] - vr[0])))
        ax.imshow(S, origin="lower", extent=(*mr, *vr), aspect="auto", cmap="coolwarm", vmin=-1, vmax=1, alpha=0.6)
        ax.scatter(ym, v, s=4, c="k", alpha=0.5, linewidths=0)
        ax.set_xlim(*mr)
        ax.set_ylim(*vr)
        N = model.N
        ax.set_title(f"{lab}: {name} (N = {N}, {'D' if kind == 'lgm_glm' else 'GP'} = {model.n}), 2nd FP update",
                     fontsize=9)
        ax.set_xlabel("y_i m_qi")
        ax.set_ylabel("v_qi")
        print(f"{lab} {name}: N = {N}, v_q in [{v.min():.3g}, {v.max():.3g}], y m_q in [{ym.min():.3g}, {ym.max():.3g}];"
              f" d gamma/dv > 0 at {(sg > 0).mean():.3f} of the points, < 0 at {(sg < 0).mean():.3f}")
    fig.tight_layout()
    fig.savefig(a.out / "fp_fig1_bc.png", dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--grid", type=int, default=200)
    ap.add_argument("--no-scatter", action="store_true", help="only the sign maps (Fig. 1(a), supplement Fig. 1)")
    ap.add_argument("--glm-dataset", default="banana,synthetic_wlan")
    ap.add_argument("--gp-dataset", default="banana")
    ap.add_argument("--gp-subsample", type=int, default=500)
    ap.add_argument("--gp-outputscale", default="", help="comma-separated fixed sf^2 values for the GP panels "
                    "(default: estimated, lgm.outputscale=null)")
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
    if not a.no_scatter:
        scatter_panels(a)


if __name__ == "__main__":
    entry.run(main)
