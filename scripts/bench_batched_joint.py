"""Benchmark: one training step (the [B] member losses, summed, and their gradient) of the batched joint DLM beta
grid at the DLM supplement's pol size: pol-shaped synthetic regression data (N = 3000, D = 26), M = 100, 19
betas, whitened SVGP, Gaussian likelihood, log-loss DLM, float64, one thread unless --threads. Two ways to get
the batch's q(f), same state, interleaved rounds:

- blocked: models/fast_svgp.py on the batched model (blocks of fast_svgp.block_size inputs; what
  BatchedBundle.loss does for whitened members since 2026-11-25);
- GPyTorch: the batched model's VariationalStrategy call (B x M x N kernel arrays in one piece; before).

Both give the same losses and gradients to rounding (asserted here; tests/unit/models/test_batched_blocked.py checks it
at 1e-10). Timed in process CPU time, median over rounds. --grid times block sizes instead (how
fast_svgp.BATCH_BLOCK_ELEMENTS was chosen).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from dlm_bench.cli import compose_config
from dlm_bench.models import fast_svgp
from dlm_bench.models.batched_svgp import BatchedBundle
from dlm_bench.models.builders import build_bundle
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run.context import seed_everything


def make_batch(n=3000, d=26, m=100, members=19, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.sin(X[:, :3].sum(-1)) + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)
    cfg = compose_config(["experiment=dlm_supp_pol", "method=dlm", f"model.num_inducing={m}", f"seed={seed}",
                          "trainer.progress=off"])
    resolve_task_defaults(cfg)
    seed_everything(seed)
    template = build_bundle(cfg, X, y).double()
    template.train()
    template.fast_joint = False
    template.loss(X[:200], y[:200])  # q(u) initialised, as on the first training call
    template.fast_joint = True
    batch = BatchedBundle(template, [1000.0 / 2 ** k for k in range(members)], fixed=False)
    with torch.no_grad():  # members apart, q(u) away from the prior
        for name, p in batch.named_parameters():
            p.add_((0.05 if "chol" in name else 0.2) * torch.randn(p.shape, generator=g, dtype=p.dtype))
    batch.train()
    return batch, X, y


def step(batch, X, y, block):
    """block None: GPyTorch's call; else the blocked q(f) with that block size (0: fast_svgp.block_size)."""
    batch.zero_grad(set_to_none=True)
    if block is None:
        batch.template.fast_joint = False
        losses = batch.loss(X, y)
        batch.template.fast_joint = True
    else:
        losses = -batch.mll(fast_svgp.blocked_whitened_predictive(batch.model, X, block or None), y)
    losses.sum().backward()
    return losses.detach(), torch.cat([p.grad.flatten() for p in batch.parameters() if p.grad is not None])


def timed(batch, X, y, block, reps):
    times = []
    for _ in range(reps):
        t0 = time.process_time()
        out = step(batch, X, y, block)
        times.append(time.process_time() - t0)
    return statistics.median(times), out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=2, help="steps per round")
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--members", type=int, default=19)
    ap.add_argument("--m", type=int, default=100, help="inducing points")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--grid", default=None, help="comma-separated block sizes to time against GPyTorch's call")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    batch, X, y = make_batch(n=args.n, m=args.m, members=args.members)
    blocks = [int(b) for b in args.grid.split(",")] if args.grid else [0]
    timed(batch, X, y, 0, 1)  # warm-up
    times = {b: [] for b in [None, *blocks]}
    outs = {}
    for _ in range(args.rounds):
        for b in times:
            t, outs[b] = timed(batch, X, y, b, args.reps)
            times[b].append(t)
    ref_loss, ref_g = outs[None]
    for b in blocks:
        loss, g = outs[b]
        assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=0), (b, loss, ref_loss)
        assert torch.allclose(g, ref_g, rtol=1e-8, atol=1e-10 * ref_g.abs().max().item()), b
    ref_s = statistics.median(times[None])
    what = f"(N={args.n}, D=26, M={args.m}, B={args.members}, whitened, log-loss DLM)"
    if args.grid:
        for b in blocks:
            s = statistics.median(times[b])
            print(f"batched joint step {what}, blocks of {b}: {s * 1e3:.0f} ms, {s / ref_s:.2f} of GPyTorch's call")
        return None
    s = statistics.median(times[0])
    print(f"batched joint step {what}: {s * 1e3:.0f} ms blocked ({fast_svgp.block_size(batch.model)} inputs per block), {ref_s * 1e3:.0f} ms "
          f"through GPyTorch's call (CPU)")
    return s / ref_s, s


if __name__ == "__main__":
    main()
