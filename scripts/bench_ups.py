"""Benchmark: the uPS sampler and the cost of a training iteration with uPS vs bMC-10 vs exact.

1. uPS throughput on a minibatch of 1000 training points (L = 10 samples each): samples per second and
   mean proposals per accepted sample, at initialisation and after a warm-up of DLM training (the paper
   reports about 2 proposals per sample after warm-up; with K = l_max the expected count is
   l_max / E_q[p(y|f)] per example).
2. ms per training iteration (DLM loss + backward + Adam step, minibatch of 1000) for uPS-10, bMC-10 and
   the deterministic likelihood term (exact probit / quadrature Poisson), same model state.

Data: abalone (count, Poisson exp link) and twonorm (binary, probit) through the normal data path when
they are available without a download (shipped, cached, placed by hand or in DLM_BENCH_MIRROR); otherwise generated
offline (`generated_data`): twonorm exactly by its generative model (Breiman 1996: two unit-covariance
Gaussians in 20-D with means +-(a, ..., a), a = 2/sqrt(20)), abalone as a count data set of the same
shape (4177 x 9, Poisson counts with rings-like mean ~10). float64, one thread unless --threads.
"""

from __future__ import annotations

import statistics
import time

import torch

import benchkit
import entry

from dlm_bench.estimators.ups import UPSStats, ups_sample


def generated_data(dataset: str, n: int, seed: int = 0):
    """Offline stand-ins, standardised inputs (float64): see the module docstring."""
    g = torch.Generator().manual_seed(seed)
    if dataset == "twonorm":
        a = 2 / 20**0.5
        y = torch.randint(0, 2, (n,), generator=g).double()
        X = torch.randn(n, 20, generator=g, dtype=torch.float64) + a * (2 * y - 1).unsqueeze(-1)
    elif dataset == "abalone":
        X = torch.randn(n, 9, generator=g, dtype=torch.float64)
        w = torch.randn(9, generator=g, dtype=torch.float64) / 3
        y = torch.poisson(torch.exp(2.25 + 0.3 * torch.tanh(X @ w) + 0.1 * torch.sin(X[:, 0])), generator=g)
    else:
        raise ValueError(dataset)
    X = (X - X.mean(0)) / X.std(0)
    return X, y


def bundle_for(dataset, estimator_overrides, n_train, seed=0, data=None):
    """(bundle, X, y, source); `data` = (X, y) to use instead of the data path (generated data)."""
    real = data is None and not benchkit.missing_offline(dataset)
    if data is None and not real:
        data = generated_data(dataset, n_train, seed)
    bundle, X, y = benchkit.run_bundle([f"dataset={dataset}", "protocol=dlm_classification",
                                        f"protocol.train_size={n_train}", "objective=dlm", "model.num_inducing=50",
                                        *estimator_overrides], *(data or (None, None)), seed)
    return bundle, X, y, "real data" if real else "generated data"


def marginals(bundle, X):
    bundle.train()
    with torch.no_grad():
        f = bundle.model(X)
        return f.mean, f.variance


def sampler_throughput(bundle, X, y, reps, L=10):
    mu, var = marginals(bundle, X)
    stats, t0 = UPSStats(), time.perf_counter()
    for _ in range(reps):
        _, s = ups_sample(bundle.likelihood, y, mu, var, L)
        stats.add(s)
    wall = time.perf_counter() - t0
    return stats.samples / wall, stats.proposals_per_sample, stats.fallback / stats.samples


def bench_dataset(dataset, deterministic, batch=1000, warmup=300, reps=10, iters=20):
    """Sampler statistics and interleaved ms/iteration of uPS-10, bMC-10 and the deterministic term."""
    base, X, y, source = bundle_for(dataset, [f"estimator={deterministic}"], batch)
    X, y = X[:batch], y[:batch]
    data = None if source == "real data" else (X, y)
    sps0, pps0, fb0 = sampler_throughput(base, X, y, max(1, reps // 2))
    base.train()
    benchkit.adam_steps(base.loss, torch.optim.Adam(base.trainable_parameters(), lr=0.1), X, y, warmup)
    sps, pps, fb = sampler_throughput(base, X, y, reps)
    lines = [f"{dataset:8s} ({source}) sampler at init: {sps0:9.0f} samples/s  {pps0:6.2f} proposals/sample  "
             f"{100 * fb0:5.1f}% of pairs need more than one round",
             f"{dataset:8s} ({source}) after {warmup} its:  {sps:9.0f} samples/s  {pps:6.2f} proposals/sample  "
             f"{100 * fb:5.1f}% of pairs need more than one round"]
    state = base.state_dict()
    labels = ("uPS-10", "bMC-10", deterministic)
    bundles = []
    for est in (["estimator=ups", "estimator.num_samples=10"], ["estimator=bmc", "estimator.num_samples=10"],
                [f"estimator={deterministic}"]):
        b, _, _, _ = bundle_for(dataset, est, batch, data=data)
        b.load_state_dict(state)
        bundles.append(b)
    times = {label: [] for label in labels}
    for _ in range(5):  # interleaved rounds: A B C A B C ...
        for label, b in zip(labels, bundles):
            times[label].append(benchkit.median_step_ms(b, X, y, max(1, iters // 5), cpu=False))
    ms = {label: statistics.median(v) for label, v in times.items()}
    lines.append(f"{dataset:8s} ms/iteration (median of 5 interleaved rounds of {max(1, iters // 5)}): "
                 + " | ".join(f"{label} {ms[label]:7.1f}" for label in labels))
    return lines, ms, source


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"batch": 100, "warmup": 2, "reps": 1, "iters": 1})
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=300, help="DLM iterations (Adam 0.1, quadrature) before timing")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--iters", type=int, default=20)
    args = benchkit.parse(ap, argv)
    print(f"uPS benchmark: minibatch {args.batch}, L = 10, float64, {args.threads} thread(s)")
    ratios = {}
    for dataset, deterministic in (("abalone", "quadrature"), ("twonorm", "exact")):
        lines, ms, source = bench_dataset(dataset, deterministic, args.batch, args.warmup, args.reps, args.iters)
        print("\n".join(lines), flush=True)
        ratios[dataset] = (ms["uPS-10"] / ms["bMC-10"], source)
    return ratios


if __name__ == "__main__":
    entry.run(main)
