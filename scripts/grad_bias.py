"""Gradient-bias statistics of a fixed-DLM model at initialisation on abalone (Wei et al. 2021, Fig. 1(g)(h), suppl. Fig. 8).

As upstream (nonconjugate/collect_gradient_demo.py): SVGP trained, fixed-hyperparameter DLM model from it, gradient of
the full loss (beta = 0.1, KL included) w.r.t. q(u)'s mean m and Cholesky factor, uPS / bMC / smooth-bMC with
L = 1, 10, 100. Writes <out>/grad_bias.csv (one row per parameter, estimator and reference: min/median/max of
conditions (i) and (ii), median/mean per-repetition error ||d - g||^2, relative bias norm) and
<out>/grad_bias_<param>_<reference>.png. See dlm_bench/estimators/gradient_bias.py for the definitions.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from dlm_bench.estimators.gradient_bias import bias_stats, full_loss_gradients, quadrature_term, term_estimators  # noqa: E402
from dlm_bench.models.builders import build_bundle  # noqa: E402
from dlm_bench.models.fixed import pretrain_and_freeze  # noqa: E402
from dlm_bench.run.context import prepare_data  # noqa: E402
from dlm_bench.training import gpytorch_internals  # noqa: E402
from dlm_bench.training.trainer import Trainer  # noqa: E402
import benchkit  # noqa: E402
import entry  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="abalone")
    ap.add_argument("--train-size", type=int, default=1000)
    ap.add_argument("--num-inducing", type=int, default=41)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--reference-samples", type=int, default=10000)
    ap.add_argument("--beta", type=float, default=0.1, help="beta of the DLM loss (upstream: 0.1)")
    ap.add_argument("--samples", default="1,10,100", help="L for every estimator (upstream: 1,10,100)")
    ap.add_argument("--pretrain-iters", type=int, default=1000, help="stage-1 SVGP: Adam steps (upstream: 1000)")
    ap.add_argument("--pretrain-lr", type=float, default=0.01, help="stage-1 SVGP: Adam lr (upstream: 0.01)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="results/dlm_grad_bias")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    # upstream nonconjugate: unwhitened strategy, GPyTorch's initial kernel, stage 1 = SVGP + ELBO (window 20)
    cfg = benchkit.run_config([f"dataset={args.dataset}", "protocol=dlm_classification",
                               f"protocol.train_size={args.train_size}", "objective=dlm",
                               "objective.hyperparameters=fixed", f"objective.beta={args.beta}",
                               f"model.num_inducing={args.num_inducing}", "model.whiten=false",
                               "model.lengthscale_init=0.6931471805599453", "model.outputscale_init=0.6931471805599453",
                               f"trainer.max_iters={args.pretrain_iters}", f"trainer.lr={args.pretrain_lr}",
                               "trainer.window=20"], args.seed)
    X, y = prepare_data(cfg, torch.device("cpu"), torch.float64).tensors["train"]
    bundle = build_bundle(cfg, X, y).double()
    trainer = Trainer.from_config(cfg.trainer, seed=args.seed)
    pre, info = pretrain_and_freeze(cfg, bundle, X, y, trainer, torch.device("cpu"), torch.float64)
    print(f"stage 1 ({info['pretrain_model']}): {pre.iterations} iterations, converged={pre.converged}, "
          f"loss {pre.final_loss:.4f}")
    bundle.train()
    bundle.model(X[:2])  # GPyTorch initialises q(u) to the prior on the first call
    q = gpytorch_internals.q_u_module(bundle.model.variational_strategy)
    params = {"m": q.variational_mean, "chol": q.chol_variational_covar}
    f = bundle.model(X)
    mu, var = f.mean, f.variance
    kl = bundle.model.variational_strategy.kl_divergence()
    lik = bundle.likelihood
    sizes = tuple(int(v) for v in args.samples.split(","))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    L = args.reference_samples
    reference_bmc = term_estimators(lik, sample_sizes=(L,))[f"bMC (L={L})"]
    for pname, param in params.items():
        def grads(term, reps):
            return full_loss_gradients(mu, var, kl, y, [param], term, reps, args.beta)

        refs = {"quadrature": grads(quadrature_term(lik), 1)[0],
                f"bMC-{args.reference_samples}": grads(reference_bmc, 1)[0]}
        est = {label: grads(fn, args.reps) for label, fn in term_estimators(lik, sample_sizes=sizes).items()}
        for ref_label, g in refs.items():
            stats = [bias_stats(label, d, g) for label, d in est.items()]
            for st in stats:
                rows.append({"param": pname, "reference": ref_label, "estimator": st.label, "reps": args.reps,
                             "cond_i_min": st.cond_i.min(), "cond_i_median": np.median(st.cond_i),
                             "cond_i_max": st.cond_i.max(), "cond_ii_min": st.cond_ii.min(),
                             "cond_ii_median": np.median(st.cond_ii), "cond_ii_max": st.cond_ii.max(),
                             "err_median": np.median(st.err), "err_mean": st.err.mean(),
                             "rel_bias_norm": st.bias_norm})
            _plot(stats, out, f"{pname}_{ref_label}", args, pname, ref_label)
        gap = np.linalg.norm(refs["quadrature"] - refs[f"bMC-{args.reference_samples}"]) / np.linalg.norm(refs["quadrature"])
        print(f"{pname}: ||g_bMC{args.reference_samples} - g_quadrature|| / ||g_quadrature|| = {gap:.3g}")
    df = pd.DataFrame(rows)
    df.to_csv(out / "grad_bias.csv", index=False)
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(df.round(4).to_string(index=False))


def _plot(stats, out, tag, args, pname, ref_label):
    fig, axes = plt.subplots(len(stats), 4, figsize=(14, 1.9 * len(stats)), squeeze=False)
    for i, s in enumerate(stats):
        axes[i][0].hist(s.cond_i, bins=30, color="C0")
        axes[i][1].hist(s.cond_ii, bins=30, color="C1")
        axes[i][2].hist(s.err, bins=30, color="C3")
        axes[i][3].hist(s.bias, bins=30, color="C2")
        axes[i][0].set_ylabel(s.label, fontsize=8)
        axes[i][3].set_title(f"||bias||/||g|| = {s.bias_norm:.3g}", fontsize=8)
    axes[0][0].set_title("condition (i): d.g / ||g||^2", fontsize=9)
    axes[0][1].set_title("condition (ii): ||d|| / ||g||", fontsize=9)
    axes[0][2].set_title("error ||d - g||^2 per repetition", fontsize=9)
    axes[-1][3].set_xlabel(f"(mean_r d_r - g)_j / ||g||  per coordinate of {pname}")
    fig.suptitle(f"{args.dataset}: gradient of the DLM loss (beta={args.beta:g}) w.r.t. {pname} of a fixed-hyperparameter "
                 f"model (trained SVGP), {args.reps} repetitions; reference g: {ref_label}", fontsize=10)
    fig.tight_layout()
    for ext in ("png", "pdf"):
        fig.savefig(out / f"grad_bias_{tag.replace(' ', '_')}.{ext}", dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    entry.run(main)
