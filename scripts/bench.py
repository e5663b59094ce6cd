"""`make bench`: every benchmark, then one line per ratio (issue 16 targets). Offline: synthetic data,
shipped boston, and abalone/twonorm only if available without a download (else generated; see
scripts/bench_ups.py). Details of each benchmark first, the summary last. docs/performance.md explains
the lines. In-process benchmarks run single threaded (torch.set_num_threads(1)) unless --threads. `--device cuda` runs the
CUDA path instead: scripts/bench_device.py, CPU vs GPU wall per step at three paper sizes.
"""

from __future__ import annotations

import os
import time

import torch

import bench_batched
import bench_batched_joint
import bench_device
import bench_fixed
import bench_fused_stats
import bench_laplace_cascade
import bench_ordinal_site
import bench_pac_sgp
import bench_savigp
import bench_startup
import bench_student_t
import bench_threads
import bench_trainer
import bench_ups
import benchkit
import entry
from benchkit import line

# CPU ms/iteration of scripts/bench_student_t.py at 82ba2af (before issue 26), this 2-core machine, 1 thread,
# median of interleaved before/after runs under the same load (docs/performance.md)
STUDENT_T_BEFORE_MS = 8.5

# (key, title, bench, its arguments in every mode, full, --quick); --smoke passes --smoke instead of the last two
BENCHES = [
    ("trainer", "Trainer vs bare GPyTorch", bench_trainer, [], ["--rounds", "5"], ["--rounds", "3"]),
    ("ups", "uPS vs bMC", bench_ups, [], ["--iters", "20", "--reps", "10"], ["--iters", "10", "--reps", "4"]),
    ("fixed", "fixed-hyperparameter path vs joint path", bench_fixed, [], ["--rounds", "5"], ["--rounds", "3"]),
    ("batched", "batched beta grid vs one run (fixed DLM, 17 betas)", bench_batched, [], [],
     ["--indices", "8", "--max-iters", "1000"]),
    ("binary", "batched beta grid vs one run (joint DLM, probit, unwhitened, 16 betas)", bench_batched,
     ["--task", "binary"], ["--indices", "0,8", "--max-iters", "1000"], ["--indices", "0,8", "--max-iters", "500"]),
    ("binary_elbo", "batched beta grid vs one run (joint beta-ELBO, probit, unwhitened, 16 betas)", bench_batched,
     ["--task", "binary", "--method", "beta_elbo"], ["--indices", "0,8", "--max-iters", "1000"],
     ["--indices", "0,8", "--max-iters", "500"]),
    ("batched_joint", "batched joint DLM step, blocked q(f) vs GPyTorch's call (pol size: N=3000, M=100, 19 betas)",
     bench_batched_joint, [], ["--rounds", "5"], ["--rounds", "2"]),
    ("student_t", "Student-t DLM step (the likelihood layer's quadrature, issue 26)", bench_student_t, [],
     ["--rounds", "5"], ["--rounds", "3"]),
    ("cascade", "Poisson quadrature DLM step, Laplace-Hermite cascade vs (12, 20) (supplement Figs. 13-14 setting)",
     bench_laplace_cascade, [], ["--rounds", "5", "--warmup", "200"], ["--rounds", "3", "--warmup", "100"]),
    ("savigp", "SAVIGP ELBO evaluation (savigp_fig1 size: Boston, M=300, S=2000)", bench_savigp, [],
     ["--rounds", "5"], ["--rounds", "3"]),
    ("pac", "kl-PAC-SGP loss + gradient (PAC Table 2 size: N=3000, M=500, SE-ARD)", bench_pac_sgp, [],
     ["--rounds", "5"], ["--rounds", "2"]),
    ("pac_blocked", "kl-PAC-SGP loss + gradient, blocks vs all at once (PAC Table 3 kin40k size: N=32000, M=500)",
     bench_pac_sgp, ["--blocked"], ["--rounds", "3"], ["--rounds", "1"]),
    ("pac_full", "kl-PAC-GP loss + gradient, closed-form vs autograd backward (PAC App. F size: N=2000, D=3)",
     bench_pac_sgp, ["--full"], ["--rounds", "3"], ["--rounds", "1"]),
    ("sq_dlm", "sq-DLM loss + gradient, fused statistics vs plain (DLM Suppl. Fig. 2 pol size: N=3000, M=100)",
     bench_fused_stats, [], ["--rounds", "5"], ["--rounds", "2"]),
    ("sgpr", "SGPR loss + gradient, fused statistics vs plain (DLM Suppl. Fig. 1 pol size: N=3000, M=100)",
     bench_fused_stats, ["--method", "sgpr"], ["--rounds", "5"], ["--rounds", "2"]),
    ("ordinal", "ordinal site expectations (SGGPM stock-shaped batch, 856 points)", bench_ordinal_site, [],
     ["--calls", "15"], ["--calls", "5"]),
    ("threads", "thread count", bench_threads, [], ["--repeats", "3"], ["--repeats", "2"]),
    ("startup", "startup of `dlm-bench --help` next to `python -c pass`", bench_startup, [], ["--repeats", "5"],
     ["--repeats", "3"]),
]


def run_all(mode: str, threads: int) -> dict:
    """Every bench in BENCHES, in order, its title first; {key: what its main returned}."""
    out = {}
    for key, title, bench, always, full, quick in BENCHES:
        print(f"== {title}", flush=True)
        size = {"smoke": ["--smoke"], "quick": quick, "full": full}[mode]
        threads_arg = ["--threads", str(threads)] if bench in (bench_ups,) else []
        out[key] = bench.main([*always, *size, *threads_arg])
        torch.set_num_threads(threads)
    return out


def summary(r: dict, cores: int) -> list[str]:
    """One line per ratio, each with its target where an issue set one (docs/performance.md explains them)."""
    lines = [line("Trainer / bare GPyTorch (ms/iteration)          ", r["trainer"][0], 1.05, fmt="6.3f"),
             line("SVGP bundle step / bare GPyTorch (ms/iteration)  ", r["trainer"][1], fmt="6.3f",
                  note="the blocked q(f) of models/fast_svgp.py; 1.0: no gain")]
    lines += [line(f"uPS-10 / bMC-10 per iteration, {dataset:8s}        ", ratio, 3, note=source)
              for dataset, (ratio, source) in r["ups"].items()]
    lines.append(line("fixed path / joint path per iteration           ", r["fixed"][0], 0.6))
    lines.append(line("batched-grid wall / one-run wall (fixed DLM, 17 betas, pol-sized synthetic data, n=1000, M=50)",
                      r["batched"], 3))
    for name in ("joint DLM", "joint beta-ELBO"):
        lines.append(line(f"batched-grid wall / one-run wall ({name}, probit, unwhitened, 16 betas, 2-D synthetic "
                          f"data, n=500, M=20)", r["binary" if name == "joint DLM" else "binary_elbo"], 3,
                          note="16 separate runs: 16"))
    bj_ratio, bj_s = r["batched_joint"]
    lines.append(line("batched joint DLM step, blocked q(f) / GPyTorch's call (N=3000, M=100, B=19)", bj_ratio,
                      note=f"{bj_s * 1e3:.0f} ms; no target, < 1: the blocking's gain"))
    st_ms, st_target = r["student_t"], 1.5 * STUDENT_T_BEFORE_MS
    lines.append(f"Student-t DLM step (boston, M=50, quadrature)    {st_ms:6.2f} ms/iteration   target <= 1.5 x "
                 f"{STUDENT_T_BEFORE_MS} ms (measured before issue 26): {benchkit.verdict(st_ms <= st_target)}")
    lines.append("Poisson quadrature DLM step, Laplace-Hermite cascade / (12, 20) (abalone, n=2000, M=50)  "
                 + ", ".join(f"{when} {v:.2f}" for when, v in r["cascade"].items())
                 + "   (no target, < 1: the cascade's gain)")
    savigp = r["savigp"]
    if isinstance(savigp, str):
        lines.append(f"SAVIGP ELBO evaluation (savigp_fig1)  {savigp}")
    else:
        ms, fwd, total, (sn, sm, ss) = savigp
        lines.append(f"SAVIGP ELBO evaluation, N={sn} M={sm} S={ss} (savigp_fig1, SF 1.0)  {ms['value']:6.1f} ms "
                     f"({fwd / 1e6:.0f} Mflop, {fwd / ms['value'] / 1e6:.2f} GFLOP/s); with gradient "
                     f"{ms['value+grad']:.1f} ms ({total / 1e6:.0f} Mflop, {total / ms['value+grad'] / 1e6:.2f} "
                     "GFLOP/s)   (no target)")
    for key, what, gain in (("pac", "SGP step, q(f) reusing Kuf / evaluating it again (N=3000, M=500)",
                             "predict_at_inputs'"),
                            ("pac_blocked", "SGP step, blocks of 2048 points / all at once (N=32000, M=500)",
                             "the blocking's"),
                            ("pac_full", "GP step, closed-form / autograd backward (N=2000)", "the closed form's")):
        ratio, secs = r[key]
        lines.append(line(f"kl-PAC-{what}", ratio, note=f"{secs * 1e3:.0f} ms; no target, < 1: {gain} gain"))
    for key, name in (("sq_dlm", "sq-DLM"), ("sgpr", "SGPR")):
        ratio, secs = r[key]
        lines.append(line(f"{name} step, fused statistics / plain (N=3000, M=100)", ratio,
                          note=f"{secs * 1e3:.0f} ms; no target, < 1: the fused path's gain"))
    ord_ratio, ord_ms = r["ordinal"]
    lines.append(line("ordinal site, split by feature levels / whole batch (856 points)", ord_ratio,
                      note=f"{ord_ms:.1f} ms; no target, < 1: the split's gain"))
    thread_ratio, _ = r["threads"]
    lines.append(line(f"1-thread / {cores}-thread wall, default run          ", thread_ratio,
                      note="< 1: one thread is faster; dlm_bench/run/threads.py picks 1 here"))
    (help_wall, help_cpu), (floor_wall, floor_cpu) = r["startup"].values()
    lines.append(line("`dlm-bench --help` startup, CPU s (median)       ", help_cpu, bench_startup.CPU_TARGET_S,
                      note=f"wall {help_wall:.2f} s; floor `python -c pass`: CPU {floor_cpu:.2f} s, wall "
                           f"{floor_wall:.2f} s"))
    return lines


def main(argv=None):
    ap = benchkit.parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    ap.add_argument("--device", default="cpu", help="cuda: the CUDA path (bench_device.py) instead of the CPU suite")
    args = benchkit.parse(ap, argv)
    if args.device != "cpu":
        size = ["--smoke"] if args.smoke else ["--rounds", "3", "--cpu-rounds", "1"] if args.quick else []
        return bench_device.main(["--device", args.device, *size])
    t0 = time.perf_counter()
    print(benchkit.machine_line(args.threads), flush=True)
    results = run_all("smoke" if args.smoke else "quick" if args.quick else "full", args.threads)
    print(f"== summary (one line per ratio; {time.perf_counter() - t0:.0f} s; load average now "
          f"{os.getloadavg()[0]:.2f}{'; --smoke: tiny problems, the ratios mean nothing' if args.smoke else ''})")
    print("\n".join(summary(results, os.cpu_count() or 1)))


if __name__ == "__main__":
    entry.run(main)
