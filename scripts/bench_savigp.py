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

import argparse
import statistics
import time

import torch


def build(overrides=()):
    from dlm_bench.cli import compose_config
    from dlm_bench.run.context import prepare_data, seed_everything
    from dlm_bench.savigp.plugin import TargetTransform, build as build_model, check_config as check_savigp

    cfg = compose_config(["experiment=savigp_fig1", "method=savigp_fg", "savigp.sparsity_factor=1.0",
                          "savigp.max_iter=1", *overrides])
    check_savigp(cfg)
    s = cfg.savigp
    seed_everything(cfg.seed)
    prep = prepare_data(cfg, torch.device("cpu"), torch.float64)  # as execute_savigp
    ds, split = prep.dataset, prep.split
    X = prep.tensors["train"][0] * s.x_scale
    y_raw = torch.as_tensor(ds.y[split.train], dtype=torch.float64)
    y = TargetTransform(s.transform, y_raw.numpy()).forward(y_raw)
    model = build_model(cfg, X, y, 1)
    gen = torch.Generator().manual_seed(s.sample_seed + cfg.seed)
    eps = model.draw_eps(s.num_samples, X.shape[0], gen)
    return model, X, y, eps, ds.name


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


def missing_data() -> str | None:
    """Why the bench cannot run here (one line), or None. Its data is a download (not shipped); offline, without a
    mirror or a cached copy, `make bench` skips this bench with this line instead of failing (issue 54)."""
    from dlm_bench.sweeps.preflight import availability

    found = availability(DATASET)  # a HEAD request where it is a download: reachable, the first load fetches it
    if found.state == "unavailable":
        return (f"skipped: needs dataset {DATASET} (boston/savigp_splits/train_1.csv ...), not cached and not "
                f"downloadable here ({found.reason}); `dlm-bench fetch {DATASET}` or DLM_BENCH_MIRROR provides it")
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--evals", type=int, default=5)
    args = ap.parse_args(argv)
    why = missing_data()
    if why:
        print(f"SAVIGP ELBO: {why}", flush=True)
        return why
    model, X, y, eps, name = build()
    N, D, M, S = X.shape[0], X.shape[1], model.M, eps.shape[0]

    def value():
        with torch.no_grad():
            model.elbo(X, y, eps)

    def value_and_grad():
        model.zero_grad(set_to_none=True)
        (-model.elbo(X, y, eps)[1]).backward()

    value(), value_and_grad()  # warm-up
    times = {"value": [], "value+grad": []}
    for _ in range(args.rounds):
        for k, fn in (("value", value), ("value+grad", value_and_grad)):
            t0 = time.perf_counter()
            for _ in range(args.evals):
                fn()
            times[k].append((time.perf_counter() - t0) / args.evals * 1e3)
    ms = {k: statistics.median(v) for k, v in times.items()}
    fwd, matrix, samples, bwd = flops(N, M, S, D)
    print(f"SAVIGP ELBO, {name} N={N} D={D} M={M} S={S}, FG, {model.estimator}, float64, {torch.get_num_threads()} "
          f"thread(s), {args.rounds} interleaved rounds of {args.evals}: value {ms['value']:.1f} ms "
          f"({', '.join(f'{t:.1f}' for t in times['value'])}), value+grad {ms['value+grad']:.1f} ms "
          f"({', '.join(f'{t:.1f}' for t in times['value+grad'])})")
    print(f"  flops (analytic): value {fwd / 1e6:.0f} M (matrix {matrix / 1e6:.0f} M, samples {samples / 1e6:.0f} M), "
          f"gradient {bwd / 1e6:.0f} M more; achieved {fwd / ms['value'] / 1e6:.2f} GFLOP/s (value), "
          f"{(fwd + bwd) / ms['value+grad'] / 1e6:.2f} GFLOP/s (value+grad)")
    return ms, fwd, fwd + bwd, (N, M, S)


if __name__ == "__main__":
    main()
