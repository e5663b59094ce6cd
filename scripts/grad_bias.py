"""Gradient-bias statistics at initialisation on abalone (Wei et al. 2021, Fig. 1(g)(h), supplement Fig. 8).

Writes <out>/grad_bias.csv (one row per estimator and reference: min/median/max of condition (i) and (ii),
relative bias norm) and <out>/grad_bias_<reference>.png (rows: estimators; columns: condition (i),
condition (ii), per-coordinate bias). See dlm_bench/gradient_bias.py for the definitions.
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

from dlm_bench import methods, runner  # noqa: E402
from dlm_bench.cli import compose_config  # noqa: E402
from dlm_bench.gradient_bias import bias_stats, gradient_samples, quadrature_term, term_estimators  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="abalone")
    ap.add_argument("--train-size", type=int, default=1000)
    ap.add_argument("--num-inducing", type=int, default=41)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--reference-samples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="results/dlm_grad_bias")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cfg = compose_config([f"dataset={args.dataset}", "protocol=dlm_classification", f"protocol.train_size={args.train_size}",
                          "objective=dlm", f"model.num_inducing={args.num_inducing}", f"seed={args.seed}"])
    runner.resolve_task_defaults(cfg)
    runner.seed_everything(args.seed)
    prep = runner.prepare_data(cfg, torch.device("cpu"), torch.float64)
    X, y = prep.tensors["train"]
    bundle = methods.build_bundle(cfg, X, y).double()
    bundle.train()
    bundle.model(X[:2])  # GPyTorch initialises q(u) to the prior on the first call
    m = bundle.model.variational_strategy._variational_distribution.variational_mean

    def marginals():
        f = bundle.model(X)
        return f.mean, f.variance

    lik = bundle.likelihood
    refs = {
        "quadrature": gradient_samples(marginals, m, y, quadrature_term(lik), 1)[0],
        f"bMC-{args.reference_samples}": gradient_samples(
            marginals, m, y, _bmc(lik, args.reference_samples), 1)[0],
    }
    est = {label: gradient_samples(marginals, m, y, fn, args.reps) for label, fn in term_estimators(lik).items()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for ref_label, g in refs.items():
        stats = [bias_stats(label, d, g) for label, d in est.items()]
        for s in stats:
            rows.append({"reference": ref_label, "estimator": s.label, "reps": args.reps,
                         "cond_i_min": s.cond_i.min(), "cond_i_median": np.median(s.cond_i), "cond_i_max": s.cond_i.max(),
                         "cond_ii_min": s.cond_ii.min(), "cond_ii_median": np.median(s.cond_ii),
                         "cond_ii_max": s.cond_ii.max(), "rel_bias_norm": s.bias_norm})
        fig, axes = plt.subplots(len(stats), 3, figsize=(11, 2.1 * len(stats)), squeeze=False)
        for i, s in enumerate(stats):
            axes[i][0].hist(s.cond_i, bins=30, color="C0")
            axes[i][1].hist(s.cond_ii, bins=30, color="C1")
            axes[i][2].hist(s.bias, bins=30, color="C2")
            axes[i][0].set_ylabel(s.label, fontsize=8)
            axes[i][2].set_title(f"||bias||/||g|| = {s.bias_norm:.3g}", fontsize=8)
        axes[0][0].set_title("condition (i): d.g / ||g||^2", fontsize=9)
        axes[0][1].set_title("condition (ii): ||d|| / ||g||", fontsize=9)
        axes[-1][2].set_xlabel("(mean_r d_r - g)_j / ||g||  per coordinate of m")
        fig.suptitle(f"{args.dataset}: DLM gradient w.r.t. the variational mean at initialisation, "
                     f"{args.reps} repetitions; reference g: {ref_label}", fontsize=10)
        fig.tight_layout()
        for ext in ("png", "pdf"):
            fig.savefig(out / f"grad_bias_{ref_label.replace(' ', '_')}.{ext}", dpi=110)
        plt.close(fig)
    df = pd.DataFrame(rows)
    df.to_csv(out / "grad_bias.csv", index=False)
    ref_gap = np.linalg.norm(refs["quadrature"] - refs[f"bMC-{args.reference_samples}"]) / np.linalg.norm(refs["quadrature"])
    print(f"||g_bMC{args.reference_samples} - g_quadrature|| / ||g_quadrature|| = {ref_gap:.3g}")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(df.round(4).to_string(index=False))


def _bmc(lik, L):
    import math

    from dlm_bench.estimators.bmc import sampled_log_likelihoods
    from dlm_bench.gradient_bias import _Marginals

    def fn(mu, var, y):
        return (torch.logsumexp(sampled_log_likelihoods(lik, _Marginals(mu, var), y, L), 0) - math.log(L)).sum()
    return fn


if __name__ == "__main__":
    main()
