"""What every bench script shares: the argument parser with its `--smoke` size, interleaved timing with medians,
microbenchmark and process timings, the bundle a run builds, the synthetic data most benches train on, the offline
data check, and the summary line with its target.

Why our own and not pytest-benchmark or asv: `make bench` prints ratios of two timings taken in interleaved rounds in
one process (A B A B ...: drift in the load of a shared machine hits both), each against a target from an issue
(docs/performance.md). pytest-benchmark times one callable at a time and reports absolute statistics; asv keeps a
history of absolute timings across commits in its own environments. Neither prints "A / B  target <= 3: met", and
neither is installed here. This module is ~200 lines; tests/integration/test_scripts.py runs every bench through it
at `--smoke` size.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Callable


def parser(doc: str, smoke: dict | None = None, threads: int | None = 1) -> argparse.ArgumentParser:
    """The bench's parser: `--smoke` (a tiny problem that runs in seconds: the sizes in `smoke`, applied as defaults so
    an explicit flag still wins) and `--threads` (torch threads; None: no such flag)."""
    ap = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="a tiny problem that runs in seconds (make test runs it; "
                    f"sets {', '.join(f'--{k.replace(chr(95), chr(45))} {v}' for k, v in (smoke or {}).items())})")
    if threads is not None:
        ap.add_argument("--threads", type=int, default=threads, help="torch threads")
    ap.set_defaults(_smoke=smoke or {})
    return ap


def parse(ap: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """Parse argv with the smoke sizes as defaults where --smoke is given; sets torch's threads if the bench has them."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--smoke" in argv:
        ap.set_defaults(**ap.get_default("_smoke"))
    args = ap.parse_args(argv)
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)
    return args


def interleaved(fns: dict[str, Callable], rounds: int, calls: int = 1, cpu: bool = True,
                warmup: bool = True) -> dict[str, list[float]]:
    """Seconds per call of each fn, one entry per round; the rounds interleave the fns (A B A B ...) so drift in the
    machine's load hits all alike. cpu: process CPU time (one thread: much less perturbed by other processes than
    wall time); else wall time. warmup: each fn once before timing."""
    clock = time.process_time if cpu else time.perf_counter
    if warmup:
        for fn in fns.values():
            fn()
    times = {label: [] for label in fns}
    for _ in range(rounds):
        for label, fn in fns.items():
            t0 = clock()
            for _ in range(calls):
                fn()
            times[label].append((clock() - t0) / calls)
    return times


def best_seconds(fn: Callable, repeats: int = 5, window: float = 0.0) -> float:
    """Best seconds per call of fn over `repeats` wall timings, after one warm-up call; each timing calls fn until
    `window` seconds have passed (once at least). For microbenchmarks, where the best is the least perturbed."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0, calls = time.perf_counter(), 0
        while not calls or time.perf_counter() - t0 < window:
            fn()
            calls += 1
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def dgemm_gflops(matmul: Callable, a, repeats: int = 5) -> float:
    """GFLOP/s of a @ a by `matmul` (np.dot, torch.mm; a square, float64), best of `repeats`: the peak that a
    GFLOP/s fraction refers to."""
    return 2 * a.shape[0] ** 3 / best_seconds(lambda: matmul(a, a), repeats) / 1e9


def medians(times: dict[str, list[float]], scale: float = 1.0) -> dict[str, float]:
    return {label: scale * statistics.median(v) for label, v in times.items()}


def rounds_text(values, scale: float = 1e3) -> str:
    return ", ".join(f"{scale * v:.1f}" for v in values)


def adam_steps(loss, opt, X, y, iters: int, cpu: bool = True) -> list[float]:
    """Seconds of each of `iters` training steps (zero_grad, loss(X, y), backward, opt.step): the unit most benches
    time. cpu: process CPU time, else wall."""
    clock = time.process_time if cpu else time.perf_counter
    times = []
    for _ in range(iters):
        t0 = clock()
        opt.zero_grad()
        loss(X, y).backward()
        opt.step()
        times.append(clock() - t0)
    return times


def median_step_ms(bundle, X, y, iters: int, lr: float = 1e-3, cpu: bool = True) -> float:
    """Median ms of `iters` Adam steps of bundle.loss, from a fresh Adam (so every side starts alike)."""
    import torch

    bundle.train()
    opt = torch.optim.Adam(bundle.trainable_parameters(), lr=lr)
    return 1e3 * statistics.median(adam_steps(bundle.loss, opt, X, y, iters, cpu))


def loss_with(attr: str, value):
    """bundle.loss with bundle.<attr> set to value first: a bundle's fast path (True) against its plain one (False)."""
    def loss(bundle, X, y):
        setattr(bundle, attr, value)
        return type(bundle).loss(bundle, X, y)
    return loss


def loss_and_grad(fn, bundle, X, y):
    """(loss, all gradients flattened) of fn(bundle, X, y)."""
    import torch

    bundle.zero_grad()
    loss = fn(bundle, X, y)
    loss.backward()
    return loss.item(), torch.cat([p.grad.flatten() for p in bundle.trainable_parameters()])


def compared(fn_a, fn_b, bundle, X, y, rounds: int, reps: int) -> tuple[float, float]:
    """Median CPU seconds of fn_a and fn_b (loss + gradient), interleaved rounds; asserts that the two losses and
    gradients agree (their first calls are the warm-up)."""
    import torch

    (a_loss, a_g), (b_loss, b_g) = (loss_and_grad(fn, bundle, X, y) for fn in (fn_a, fn_b))
    assert abs(a_loss - b_loss) <= 1e-12 * abs(b_loss), (a_loss, b_loss)
    assert torch.allclose(a_g, b_g, rtol=1e-8, atol=1e-10 * b_g.abs().max().item())
    times = interleaved({"a": lambda: loss_and_grad(fn_a, bundle, X, y),
                         "b": lambda: loss_and_grad(fn_b, bundle, X, y)}, rounds, reps, warmup=False)
    return tuple(medians(times).values())


def dlm_bench_cmd() -> list[str]:
    """The venv's `dlm-bench`, else the module (a checkout that was not pip-installed)."""
    from pathlib import Path

    exe = Path(sys.executable).parent / "dlm-bench"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dlm_bench.cli"]


def run_config(overrides: list[str], seed: int = 0):
    """The config `dlm-bench run <overrides>` composes (task defaults resolved, progress off), the run's seeds set."""
    from dlm_bench.models.task_defaults import resolve_task_defaults
    from dlm_bench.run.context import seed_everything
    from dlm_bench.sweeps.compose import compose_config

    cfg = compose_config([*overrides, f"seed={seed}", "trainer.progress=off"])
    resolve_task_defaults(cfg)
    seed_everything(seed)
    return cfg


def run_bundle(overrides: list[str], X=None, y=None, seed: int = 0):
    """(bundle, X, y): the float64 bundle `dlm-bench run <overrides>` builds, on (X, y), or on the run's own training
    data when X is None."""
    import torch

    from dlm_bench.models.builders import build_bundle
    from dlm_bench.run.context import prepare_data

    cfg = run_config(overrides, seed)
    if X is None:
        X, y = prepare_data(cfg, torch.device("cpu"), torch.float64).tensors["train"]
    return build_bundle(cfg, X, y).double(), X, y


def synthetic_bundle(overrides: list[str], n: int, d: int, seed: int = 0):
    """run_bundle on synthetic_regression data of n x d, y from the first three inputs."""
    return run_bundle(overrides, *synthetic_regression(n, d, seed, informative=3), seed)


def timed_process(cmd: list[str], env: dict | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of cmd as a fresh process, output discarded (a failing command is an error); CPU
    is the child's user + system time (resource.getrusage of the children)."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def synthetic_regression(n: int, d: int, seed: int = 0, informative: int | None = None):
    """float64 N(0, I) inputs and y = sin(sum of the first `informative` inputs (all by default)) + 0.1 N(0, 1)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    y = torch.sin(X[:, :informative].sum(-1)) + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)
    return X, y


def missing_offline(dataset: str) -> str | None:
    """Why `dataset` cannot be loaded without the network (one line), or None. Benches never download: shipped,
    cached, placed by hand or in DLM_BENCH_MIRROR, else this line (`make bench` prints it and goes on)."""
    from dlm_bench.data.availability import locate

    found = locate(dataset)
    if found.state in ("shipped", "cached", "hand", "mirror"):
        return None
    why = found.reason or f"not cached and no mirror ({found.phrase})"
    return f"skipped: needs dataset {dataset}, {why}; `dlm-bench fetch {dataset}` or DLM_BENCH_MIRROR provides it"


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def line(label: str, value: float, target: float | None = None, note: str = "", fmt: str = "6.2f") -> str:
    """One summary line: label, value, and `target <= T: met` where the issue set a target, then a note."""
    text = f"{label}  {value:{fmt}}"
    if target is not None:
        text += f"   target <= {target:g}: {verdict(value <= target)}"
    return text + (f"   ({note})" if note else "")


def machine_line(threads: int) -> str:
    import torch

    return (f"== machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} (1 min), torch "
            f"{torch.__version__}, in-process benchmarks with {threads} thread(s)")
