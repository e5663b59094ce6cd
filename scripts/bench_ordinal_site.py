"""Benchmark: the ordinal site's expectations (E, dE/dmu, dE/dvar) on a batch shaped like the SGGPM stock runs'
(856 points, cumulative logit with slope 50, var / width^2 log-normal around 270 with 1 % at 4e4), one thread:
the batch split by feature levels (`quadrature.expected_log_prob_and_derivatives`, what the sites call) against the
whole batch in one rule (the same with `by_levels=False`). Interleaved calls, process CPU time, medians. Both
give the same numbers to rounding (asserted here; tests/unit/fp/test_fp_core.py)."""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch

from dlm_bench.gpmath.sites import make_site
from dlm_bench.likelihoods import quadrature as quad


def batch(n=856, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(1, 6, (n,), generator=g).double()
    m = torch.randn(n, generator=g, dtype=torch.float64)
    ratio = torch.exp(torch.randn(n, generator=g, dtype=torch.float64) + math.log(270.0))
    ratio[: max(1, n // 100)] = 4e4
    return y, m, ratio / 50.0**2


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--n", type=int, default=856)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    site = make_site("ordinal", thresholds=[-1.0, -1 / 3, 1 / 3, 1.0], slope=50.0)
    y, m, v = batch(args.n)
    feats = site.features(y)
    grouped_fn = lambda: quad.expected_log_prob_and_derivatives(site.log_phi, y, m, v, feats, site.derivs)  # noqa: E731
    whole_fn = lambda: quad.expected_log_prob_and_derivatives(site.log_phi, y, m, v, feats, site.derivs,  # noqa: E731
                                                              by_levels=False)
    for a, b in zip(grouped_fn(), whole_fn()):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    grouped, whole = [], []
    for _ in range(args.calls):
        for fn, out in ((grouped_fn, grouped), (whole_fn, whole)):
            t0 = time.process_time()
            fn()
            out.append(time.process_time() - t0)
    g_ms, w_ms = statistics.median(grouped) * 1e3, statistics.median(whole) * 1e3
    print(f"ordinal site expectations, {args.n} points: {g_ms:.1f} ms split by feature levels, {w_ms:.1f} ms whole (CPU)")
    return g_ms / w_ms, g_ms


if __name__ == "__main__":
    main()
