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

import torch

import benchkit
import entry
from dlm_bench.models import fast_svgp
from dlm_bench.models.batched_svgp import BatchedBundle


def make_batch(n=3000, d=26, m=100, members=19, seed=0):
    template, X, y = benchkit.synthetic_bundle(["experiment=dlm_supp_pol", "method=dlm", f"model.num_inducing={m}"],
                                               n, d, seed)
    g = torch.Generator().manual_seed(seed + 1)
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


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"rounds": 1, "reps": 1, "n": 300, "members": 3, "m": 10})
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=2, help="steps per round")
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--members", type=int, default=19)
    ap.add_argument("--m", type=int, default=100, help="inducing points")
    ap.add_argument("--grid", default=None, help="comma-separated block sizes to time against GPyTorch's call")
    args = benchkit.parse(ap, argv)
    batch, X, y = make_batch(n=args.n, m=args.m, members=args.members)
    blocks = [int(b) for b in args.grid.split(",")] if args.grid else [0]
    ref_loss, ref_g = step(batch, X, y, None)
    for b in blocks:  # the same numbers; also the warm-up
        loss, g = step(batch, X, y, b)
        assert torch.allclose(loss, ref_loss, rtol=1e-10, atol=0), (b, loss, ref_loss)
        assert torch.allclose(g, ref_g, rtol=1e-8, atol=1e-10 * ref_g.abs().max().item()), b
    ms = benchkit.medians(benchkit.interleaved({b: (lambda b=b: step(batch, X, y, b)) for b in [None, *blocks]},
                                               args.rounds, args.reps, warmup=False), 1e3)
    what = f"(N={args.n}, D=26, M={args.m}, B={args.members}, whitened, log-loss DLM)"
    if args.grid:
        for b in blocks:
            print(f"batched joint step {what}, blocks of {b}: {ms[b]:.0f} ms, {ms[b] / ms[None]:.2f} of GPyTorch's call")
        return None
    print(f"batched joint step {what}: {ms[0]:.0f} ms blocked ({fast_svgp.block_size(batch.model)} inputs per block), "
          f"{ms[None]:.0f} ms through GPyTorch's call (CPU)")
    return ms[0] / ms[None], ms[0] / 1e3


if __name__ == "__main__":
    entry.run(main)
