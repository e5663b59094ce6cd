"""Sheth, Wang & Khardon (2015), SGGPM: sparse / SoD GGPM, Laplace, grad, dual, FP (sggpm.*). Its config section,
SggpmConfig, lives here with its range metadata (config/domains.py), checked before any data is loaded; what depends
on the dataset (its task, size_index and folds against its rows) stays in dlm_bench/sggpm/plugin.py."""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..config.capabilities import ModelSpec
from ..config.domains import at_least, one_of, ranged
from ..config.papers import Dotted, Paper

METHODS = ("laplace_sod", "grad_sod", "dual_sod", "fp_sod", "grad_sparse", "dual_sparse", "fp_sparse")
MAX_SIZES = 100  # sizes on the log grid (the paper: 10)
MAX_FOLDS = 100  # folds (the paper: 10)


@dataclass
class SggpmConfig:
    """model=sggpm (Sheth, Wang & Khardon 2015; dlm_bench/sggpm, docs/sggpm.md). One run = one method at one
    active-set size, trained and tested on every fold. Dropped from run names of other models."""

    method: str = one_of("fp_sparse", METHODS, f"unknown sggpm method {{value!r}}; valid choices: {', '.join(METHODS)}")
    # index into ISS = round(logspace(log10 ceil(N/100), log10 min(1000, floor(N/2)), 10))
    size_index: int = at_least(0, 0)
    num_sizes: int = ranged(10, f"{{key}} must be an integer in [1, {MAX_SIZES}] (sizes on the log grid; the paper: "
                            "10), got {value}", low=1, high=MAX_SIZES)
    folds: int = ranged(10, f"{{key}} must be an integer in [2, {MAX_FOLDS}] (the paper: 10), got {{value}}", low=2,
                        high=MAX_FOLDS)
    max_folds: Optional[int] = at_least(None, nullable=True)  # evaluate only the first folds (smoke runs); null: all
    # upstream's SV = 1 (numpy's generator: not MATLAB's permutation)
    perm_seed: int = ranged(1, "{key} must be an integer >= 0 and < 2**63, got {value}", low=0, high=2**63,
                            high_open=True)
    published_splits: bool = False  # ucsdpeds1l: upstream's stored active-set order and M = 167 folds
    upstream_mean_double_log: bool = True  # init_hyps' constant mean log(log m_y - sf2/2) (upstream bug, kept)
    max_outer: int = at_least(100)
    learn_hyperparameters: bool = False  # Fig. 4: L-BFGS on log-hyperparameters of the VLB (Laplace: log q(y))
    # binary dual: true keeps 0 < lambda < 1 (L-BFGS-B box); false: upstream's step rule, lambda > 0 only, and
    # D = +inf at lambda >= 1 (dual_max_step_func.m, calc_dualconj.m; sggpm/dual.py fit_dual)
    dual_upper_bound: bool = True


_PLUGIN = "dlm_bench.sggpm.plugin"

PAPER = Paper(
    name="sggpm",
    models=(ModelSpec("sggpm", ("elbo",), execute=Dotted(f"{_PLUGIN}:execute"),
                      check_config=Dotted(f"{_PLUGIN}:check_config"), check_data=Dotted(f"{_PLUGIN}:check_data"),
                      own_loop=True, own_objective="vlb", paper="sggpm", config_section="sggpm", checkpoints=True,
                      fit_size=Dotted(f"{_PLUGIN}:fit_size"), size_keys=("sggpm.size_index",),
                      label=lambda cfg: cfg.sggpm.method, description="sparse variational GGPM (dlm_bench/sggpm)"),),
    sections={"sggpm": SggpmConfig},
    layouts=Path(__file__).with_suffix(".yaml"),
)
