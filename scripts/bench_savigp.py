"""Benchmark: ms per SAVIGP ELBO evaluation next to its flop count (issue 29).

The size of `dlm-bench run experiment=savigp_fig1 method=savigp_fg savigp.sparsity_factor=1.0 savigp.max_iter=1`: Boston
(shipped split, N = 300 training points, D = 13), M = 300 inducing points (SF = 1.0), S = 2000 samples, one latent
process, full Gaussian q(u), estimator score_cv, the run's model (dlm_bench/savigp/plugin.py `build`) and its fixed
sample set. Two timings, interleaved: the ELBO value alone (`Savigp.elbo`, no gradient: what the fit evaluates after
each block) and value + gradient (one L-BFGS closure: `-elbo` surrogate, backward). The flop counts are analytic (the
dominant terms, dlm_bench/savigp/model.py), so the ratio is an achieved GFLOP/s; a low one means the evaluation is
bound by memory traffic (the S x N sample arrays) or by per-operation overhead, not by arithmetic.
"""

from __future__ import annotations

import torch

import benchkit
import entry


def build(overrides=(), smoke_n=0):
    """The run's model, data and fixed sample set; smoke_n > 0: Boston-shaped synthetic data of smoke_n rows instead
    of the dataset (offline, seconds)."""
    from dlm_bench.run.context import prepare_data, seed_everything
    from dlm_bench.savigp.plugin import TargetTransform, build as build_model, check_config as check_savigp
    from dlm_bench.sweeps.compose import compose_config

    cfg = compose_config(["experiment=savigp_fig1", "method=savigp_fg", "savigp.sparsity_factor=1.0",
                          "savigp.max_iter=1", *overrides])
    check_savigp(cfg)
    s = cfg.savigp
    seed_everything(cfg.seed)
    if smoke_n:
        X, y = benchkit.synthetic_regression(smoke_n, 13, cfg.seed)
        name = "synthetic"
    else:
        prep = prepare_data(cfg, torch.device("cpu"), torch.float64)  # as execute_savigp
        ds, split = prep.dataset, prep.split
        X = prep.tensors["train"][0] * s.x_scale
        y_raw = torch.as_tensor(ds.y[split.train], dtype=torch.float64)
        y, name = TargetTransform(s.transform, y_raw.numpy()).forward(y_raw), ds.name
    model = build_model(cfg, X, y, 1)
    gen = torch.Generator().manual_seed(s.sample_seed + cfg.seed)
    eps = model.draw_eps(s.num_samples, X.shape[0], gen)
    return model, X, y, eps, name


def flops(N, M, S, D):
    """Dominant flops of one ELBO value (forward) and of its gradient (backward), Q = K = 1, FG posterior, score_cv.
    Matrix terms: kernels 2 M^2 D + 2 M N D; chol(K_zz) M^3 / 3; A = K_zz^-1 K_zx by cholesky_solve 2 M^2 N; b = A m
    2 M N; A chol(S) (a dense matmul) 2 N M^2; L_cross's L^-1 chol(S) M^3. Sample terms, per (s, n): f = b + sd eps,
    Gaussian log p, the two score-function products and their control-variate corrections: about 20.
    Backward: the samples are detached (only b, Sigma and the likelihood's parameters get gradients), so about twice
    the matrix terms plus a few passes over the S x N log p."""
    matrix = 2 * M * M * D + 2 * M * N * D + M ** 3 / 3 + 2 * M * M * N + 2 * M * N + 2 * N * M * M + M ** 3
    samples = 20 * S * N
    backward = 2 * (2 * M * M * N + 2 * N * M * M + M ** 3 + 2 * M * M * D + 2 * M * N * D) + 5 * S * N
    return matrix + samples, matrix, samples, backward


DATASET = "boston_savigp"  # savigp_fig1's data: the SAVIGP repository's five Boston splits (boston/savigp_splits/)
SMOKE_N = 40  # --smoke: 40 synthetic Boston-shaped rows (M = 40), 50 samples: offline, seconds


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"rounds": 1, "evals": 1}, threads=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--evals", type=int, default=5)
    args = benchkit.parse(ap, argv)
    why = None if args.smoke else benchkit.missing_offline(DATASET)
    if why:  # `make bench` offline: one line, the other benches go on
        print(f"SAVIGP ELBO: {why}", flush=True)
        return why
    model, X, y, eps, name = build(["savigp.num_samples=50"] if args.smoke else (), SMOKE_N if args.smoke else 0)
    N, D, M, S = X.shape[0], X.shape[1], model.M, eps.shape[0]

    def value():
        with torch.no_grad():
            model.elbo(X, y, eps)

    def value_and_grad():
        model.zero_grad(set_to_none=True)
        (-model.elbo(X, y, eps)[1]).backward()

    times = benchkit.interleaved({"value": value, "value+grad": value_and_grad}, args.rounds, args.evals, cpu=False)
    ms = benchkit.medians(times, 1e3)
    fwd, matrix, samples, bwd = flops(N, M, S, D)
    print(f"SAVIGP ELBO, {name} N={N} D={D} M={M} S={S}, FG, {model.estimator}, float64, {torch.get_num_threads()} "
          f"thread(s), {args.rounds} interleaved rounds of {args.evals}: value {ms['value']:.1f} ms "
          f"({benchkit.rounds_text(times['value'])}), value+grad {ms['value+grad']:.1f} ms "
          f"({benchkit.rounds_text(times['value+grad'])})")
    print(f"  flops (analytic): value {fwd / 1e6:.0f} M (matrix {matrix / 1e6:.0f} M, samples {samples / 1e6:.0f} M), "
          f"gradient {bwd / 1e6:.0f} M more; achieved {fwd / ms['value'] / 1e6:.2f} GFLOP/s (value), "
          f"{(fwd + bwd) / ms['value+grad'] / 1e6:.2f} GFLOP/s (value+grad)")
    return ms, fwd, fwd + bwd, (N, M, S)


if __name__ == "__main__":
    entry.run(main)
