"""Benchmark: the ordinal site's expectations (E, dE/dmu, dE/dvar) on a batch shaped like the SGGPM stock runs'
(856 points, cumulative logit with slope 50, var / width^2 log-normal around 270 with 1 % at 4e4), one thread:
the batch split by feature levels (`quadrature.expected_log_prob_and_derivatives`, what the sites call) against the
whole batch in one rule (the same with `by_levels=False`). Interleaved calls, process CPU time, medians. Both
give the same numbers to rounding (asserted here; tests/unit/lgm/test_fp_core.py)."""

from __future__ import annotations

import math

import torch

import benchkit
import entry

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
    ap = benchkit.parser(__doc__, smoke={"calls": 1, "n": 600})
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--n", type=int, default=856)
    args = benchkit.parse(ap, argv)
    site = make_site("ordinal", thresholds=[-1.0, -1 / 3, 1 / 3, 1.0], slope=50.0)
    y, m, v = batch(args.n)
    feats = site.features(y)

    def by_levels(split):
        return lambda: quad.expected_log_prob_and_derivatives(site.log_phi, y, m, v, feats, site.derivs,
                                                              by_levels=split)

    for a, b in zip(by_levels(True)(), by_levels(False)()):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    ms = benchkit.medians(benchkit.interleaved({"split": by_levels(True), "whole": by_levels(False)}, args.calls,
                                               warmup=False), 1e3)
    print(f"ordinal site expectations, {args.n} points: {ms['split']:.1f} ms split by feature levels, "
          f"{ms['whole']:.1f} ms whole (CPU)")
    return ms["split"] / ms["whole"], ms["split"]


if __name__ == "__main__":
    entry.run(main)
