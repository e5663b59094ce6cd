"""`make bench-peers`: dlm_bench against GPflow, ms per iteration, side by side in one process (issue 29).

(a) the whitened SVGP ELBO Adam step: synthetic N=10000, D=8, M=100, ARD RBF, Gaussian likelihood, float64, full
    batch. dlm_bench: the bundle `dlm-bench run objective=elbo model.ard=true model.num_inducing=100` builds
    (build_bundle), trained by train.Trainer as a run trains it; GPflow: gpflow.models.SVGP (whiten=True,
    SquaredExponential with one lengthscale per dimension), its training loss minimised by Adam in a tf.function.
(b) the collapsed SGPR bound with its gradient and an Adam step: N=5000, M=200, same data kind. dlm_bench:
    `model=sgpr model.ard=true` (models/sgpr.py) through Trainer; GPflow: gpflow.models.SGPR.

Both sides start from the same Z (a random subset of X), lengthscales 1, signal variance 1, noise variance 0.1, zero
mean. Rounds interleave (dlm_bench, GPflow, dlm_bench, ...), one thread each (torch.set_num_threads(1), TF intra-
and inter-op threads 1); medians are reported, and each ratio is the median over rounds of that round's ratio. The
"dlm_bench, GPyTorch path" column is the same dlm_bench bundle with its fast paths switched off
(SVGPBundle.fast_joint / CollapsedBundle.fast = False): what a run cost before them.
Needs GPflow (the Makefile installs it into .venv-peers); data synthetic, seeded, offline.
"""

from __future__ import annotations

import functools
import os
import statistics

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import benchkit  # noqa: E402
import entry  # noqa: E402


def data(n, d, seed):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = np.sin(X.sum(-1)) + 0.1 * rng.randn(n)
    return X, y


def inducing(X, m, seed):
    return X[np.random.default_rng(seed).choice(X.shape[0], size=m, replace=False)].copy()


# ---------------------------------------------------------------- machine
def cpu_model() -> str:
    """The CPU model name and vendor (/proc/cpuinfo; platform.processor() elsewhere)."""
    try:
        info = {}
        for line in open("/proc/cpuinfo").read().splitlines():
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())
        return f"{info['model name']} ({info['vendor_id']})"
    except (OSError, KeyError, ValueError):
        import platform

        return platform.processor() or platform.machine()


def blas_names() -> tuple[str, str]:
    """(torch's BLAS, numpy's BLAS), as their build configurations name them."""
    import re

    cfg = torch.__config__.show()
    mkl = re.search(r"Math Kernel Library Version ([^\n]+?) for", cfg)
    blas = re.search(r"BLAS_INFO=(\w+)", cfg)
    torch_blas = f"MKL {mkl.group(1)}" if mkl else (blas.group(1) if blas else "unknown")
    try:
        dep = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        numpy_blas = f"{dep.get('name')} {dep.get('version')}"
    except Exception:  # older numpy: no dict mode
        numpy_blas = "unknown"
    return torch_blas, numpy_blas


def machine_line() -> str:
    a = np.random.default_rng(0).standard_normal((1000, 1000))
    ta = torch.from_numpy(a)
    torch_blas, numpy_blas = blas_names()
    return (f"== CPU: {cpu_model()}; torch BLAS: {torch_blas}; numpy BLAS: {numpy_blas}; dgemm 1000^3 one thread: "
            f"torch {benchkit.dgemm_gflops(torch.mm, ta, 10):.1f}, numpy {benchkit.dgemm_gflops(np.dot, a, 10):.1f} "
            "GFLOP/s")


# ---------------------------------------------------------------- dlm_bench
def dlm_bench_side(model_name, X, y, Z, fast: bool):
    from dlm_bench.models.sgpr import CollapsedBundle
    from dlm_bench.models.svgp import SVGPBundle
    from dlm_bench.training.trainer import Trainer

    overrides = ["dataset=boston", f"model={model_name}", "model.ard=true", f"model.num_inducing={Z.shape[0]}",
                 "model.noise_init=0.1", "model.lengthscale_init=1.0", "model.outputscale_init=1.0"]
    if model_name == "svgp":
        overrides += ["objective=elbo"]
    bundle, Xt, yt = benchkit.run_bundle(overrides, torch.as_tensor(X), torch.as_tensor(y))
    with torch.no_grad():  # the same Z as the GPflow side
        if isinstance(bundle, SVGPBundle):
            bundle.model.variational_strategy.inducing_points.copy_(torch.as_tensor(Z))
            bundle.fast_joint = fast
        else:
            bundle.Z.copy_(torch.as_tensor(Z))
            assert isinstance(bundle, CollapsedBundle)
            bundle.fast = fast
    bundle.train()

    def run(iters):
        # tol < 0: the stopping rule never fires, so exactly `iters` iterations
        trainer = Trainer(lr=0.01, max_iters=iters, window=50, tol=-1.0, progress=False)
        res = trainer.fit(bundle.loss, bundle.trainable_parameters(), Xt, yt)
        assert res.status == "ok" and res.iterations == iters, res

    return run


# ---------------------------------------------------------------- GPflow
def gpflow_side(model_name, X, y, Z):
    import gpflow
    import tensorflow as tf

    gpflow.config.set_default_float(np.float64)
    d = X.shape[1]
    kernel = gpflow.kernels.SquaredExponential(variance=1.0, lengthscales=np.ones(d))
    Yc = y[:, None]
    if model_name == "svgp":
        model = gpflow.models.SVGP(kernel, gpflow.likelihoods.Gaussian(variance=0.1), inducing_variable=Z.copy(),
                                   num_data=X.shape[0], whiten=True)
        loss = model.training_loss_closure((tf.constant(X), tf.constant(Yc)), compile=False)
    else:
        model = gpflow.models.SGPR((tf.constant(X), tf.constant(Yc)), kernel, inducing_variable=Z.copy(),
                                   noise_variance=0.1)
        loss = model.training_loss
    opt = tf.optimizers.Adam(learning_rate=0.01)
    variables = model.trainable_variables

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            value = loss()
        grads = tape.gradient(value, variables)
        opt.apply_gradients(zip(grads, variables))
        return value

    def run(iters):
        for _ in range(iters):
            value = step()
        float(value.numpy())  # TF runs eagerly op by op on CPU, but make sure the last step has finished

    return run


def compare(label, sides, iters, rounds):
    for run in sides.values():  # warm-up: tf.function tracing, GPyTorch caches, first q(u) initialisation
        run(2)
    times = benchkit.interleaved({k: functools.partial(run, iters) for k, run in sides.items()}, rounds, cpu=False,
                                 warmup=False)
    times = {k: [1e3 * t / iters for t in v] for k, v in times.items()}
    ms = benchkit.medians(times)
    print(f"{label}: {rounds} interleaved rounds of {iters} iterations, ms/iteration median (rounds)")
    for k, v in times.items():
        print(f"  {k:28s} {ms[k]:8.2f}  ({', '.join(f'{t:.1f}' for t in v)})")
    # the ratio of each round's adjacent measurements, then the median: robust to load drifting between rounds
    paired = {k: statistics.median(a / b for a, b in zip(v, times["GPflow"])) for k, v in times.items()}
    return ms, paired


def main(argv=None):
    ap = benchkit.parser(__doc__, smoke={"rounds": 1, "iters": 1, "n_scale": 0.05}, threads=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="3 rounds of 5 iterations")
    ap.add_argument("--only", choices=("svgp", "sgpr"), default=None)
    ap.add_argument("--n-scale", type=float, default=1.0, help="scales both N")
    args = benchkit.parse(ap, argv)
    if args.quick:
        args.rounds, args.iters = 3, 5
    torch.set_num_threads(1)
    try:
        import gpflow  # noqa: F401
        import tensorflow as tf
    except ImportError as err:
        from dlm_bench.errors import ConfigError

        raise ConfigError(f"needs GPflow and TensorFlow ({err}): `make bench-peers` installs them into .venv-peers "
                          "and runs this script there") from None

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    print(f"== machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; torch {torch.__version__}, "
          f"gpytorch {__import__('gpytorch').__version__}, tensorflow {tf.__version__}, gpflow {gpflow.__version__}; "
          f"one thread each", flush=True)
    print(machine_line(), flush=True)
    results = {}
    cases = {"svgp": ("(a) SVGP ELBO Adam step, whitened, N=10000 M=100 D=8, ARD RBF, float64", 10000, 100),
             "sgpr": ("(b) collapsed SGPR bound + gradient + Adam step, N=5000 M=200 D=8, ARD RBF, float64", 5000, 200)}
    for name, (label, n, m) in cases.items():
        if args.only and name != args.only:
            continue
        n = int(n * args.n_scale)
        X, y = data(n, 8, seed=0)
        Z = inducing(X, m, seed=0)
        sides = {"dlm_bench": dlm_bench_side(name, X, y, Z, fast=True),
                 "GPflow": gpflow_side(name, X, y, Z),
                 "dlm_bench, GPyTorch path": dlm_bench_side(name, X, y, Z, fast=False)}
        results[name] = (label, compare(label, sides, args.iters, args.rounds))
    print(f"== summary (load average now {os.getloadavg()[0]:.2f}); target: dlm_bench / GPflow <= 1.0")
    for name, (label, (ms, paired)) in results.items():
        r, r0 = paired["dlm_bench"], paired["dlm_bench, GPyTorch path"]
        print(f"dlm_bench / GPflow ms per iteration, {label}: {r:5.2f}  "
              f"({ms['dlm_bench']:.1f} vs {ms['GPflow']:.1f} ms; GPyTorch path {r0:.2f})  "
              f"target <= 1.0: {'met' if r <= 1.0 else 'NOT met'}")
    return results


if __name__ == "__main__":
    entry.run(main)
