"""Benchmark: CPU vs CUDA wall per step at three paper sizes (`make bench ARGS="--device cuda"`).

What decides whether an experiment is "GPU-sized". Each workload is the model a run builds, on synthetic data of the
paper's shape, float64 as every run:

- SAVIGP ELBO value + gradient (one L-BFGS closure) at savigp_fig4's size: MNIST-shaped N = 60000, D = 784, M = 200,
  S = 2000, logistic likelihood, FG posterior, score_cv, pixel-like inputs in [0, 1]; L_ell in the run's point blocks
  (Savigp.points_per_block, which depends on the device);
- joint DLM loss + gradient at DLM Fig. 1(c) large-n size: cadata-shaped n = 13829, D = 8, M = 206, one minibatch of
  6000 (SVGPBundle.loss, the run's path);
- kl-PAC-SGP loss + gradient at PAC Table 2 size: N = 3000, D = 26, M = 500, SE-ARD (scripts/bench_pac_sgp.py's model).

Wall per step (torch.cuda.synchronize around the CUDA steps), median over rounds after one warm-up step; the CPU uses
torch's default thread count unless --threads. --n-scale shrinks every N (a quick check on a CPU-only machine).
"""

from __future__ import annotations

import torch

import benchkit
import entry
from dlm_bench.run.context import seed_everything
from dlm_bench.sweeps.compose import compose_config


def savigp_step(device, n_scale):
    from dlm_bench.savigp.plugin import build

    cfg = compose_config(["experiment=savigp_fig4", "savigp.inducing=nested"])  # k-means would dominate the setup
    n, d = max(400, int(60000 * n_scale)), 784
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    y = torch.where(X[:, :10].mean(1) > 0.5, 1.0, -1.0).double()
    seed_everything(0)
    model = build(cfg, X, y, 1).to(device)
    X, y = X.to(device), y.to(device)
    S = cfg.savigp.num_samples
    eps = model.draw_eps(S, n, torch.Generator(device=device).manual_seed(1))
    chunk = model.points_per_block(S)

    def step():
        model.zero_grad(set_to_none=True)
        (-model.elbo(X, y, eps, chunk)[1]).backward()

    return step, f"SAVIGP ELBO + grad, N={n} D={d} M={model.M} S={S} (blocks of {min(chunk, n)})"


def bundle_step(overrides, n, d, batch, device, name):
    bundle, X, y = benchkit.synthetic_bundle(overrides, n, d)
    bundle = bundle.to(device)
    bundle.train()
    Xb, yb = X[:batch].to(device), y[:batch].to(device)
    params = list(bundle.trainable_parameters())

    def step():
        for p in params:
            p.grad = None
        bundle.loss(Xb, yb).backward()

    return step, name


def workloads(device, n_scale):
    n_dlm, n_pac = max(300, int(13829 * n_scale)), max(600, int(3000 * n_scale))
    yield savigp_step(device, n_scale)
    yield bundle_step(["experiment=dlm_supp_beta_cadata", "method=dlm", "model.num_inducing=206"], n_dlm, 8,
                      min(6000, n_dlm), device, f"joint DLM loss + grad, n={n_dlm} M=206, minibatch {min(6000, n_dlm)}")
    yield bundle_step(["experiment=pac_table2", "dataset=pol", "model.ard=true", "model.num_inducing=500",
                       "method=kl_pac_sgp"], n_pac, 26, n_pac, device, f"kl-PAC-SGP loss + grad, N={n_pac} M=500 ARD")


def timed(step, device, rounds):
    """Median wall seconds of step (synchronised on CUDA) after one warm-up (CUDA context, kernels, allocator)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    times = benchkit.interleaved({"step": lambda: (step(), sync())}, rounds, cpu=False)
    return benchkit.medians(times)["step"]


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"device": "cpu", "n_scale": 0.01, "rounds": 1, "cpu_rounds": 1}, threads=0)
    ap.add_argument("--device", default="cuda", help="the device compared with the CPU (default cuda)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu-rounds", type=int, default=2, help="the CPU is slow at these sizes")
    ap.add_argument("--n-scale", type=float, default=1.0)
    args = benchkit.parse(ap, argv)  # --threads 0: torch's default
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        from dlm_bench.errors import ConfigError

        raise ConfigError("torch sees no CUDA device (this benchmark compares the CPU with a GPU)")
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else str(dev)
    print(f"CPU ({torch.get_num_threads()} threads) vs {name}, float64, torch {torch.__version__}", flush=True)
    rows = []
    for (cpu_step, cpu_label), (dev_step, label) in zip(workloads(torch.device("cpu"), args.n_scale),
                                                         workloads(dev, args.n_scale)):
        cpu_s = timed(cpu_step, torch.device("cpu"), args.cpu_rounds)
        dev_s = timed(dev_step, dev, args.rounds)
        rows.append((label, cpu_s, dev_s))
        shown = label if label == cpu_label else f"{label}; on the CPU {cpu_label.split('(')[-1].rstrip(')')}"
        print(f"  {shown}: CPU {cpu_s * 1e3:.1f} ms, {dev.type} {dev_s * 1e3:.1f} ms, speed-up {cpu_s / dev_s:.1f}x",
              flush=True)
        del cpu_step, dev_step
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    if dev.type == "cuda":
        print(f"  peak {dev.type} memory {torch.cuda.max_memory_allocated(dev) / 2 ** 30:.2f} GiB")
    return rows


if __name__ == "__main__":
    entry.run(main)
