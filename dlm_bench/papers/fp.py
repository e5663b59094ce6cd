"""Sheth & Khardon (2016), the FP paper: the extended LGM optimised by GRAD / FPb / FPi (lgm.*) with its own fit
loop (dlm_bench/lgm). Its config section, LgmConfig, lives here with its range metadata (config/domains.py), checked
before any data is loaded; what depends on the dataset (the likelihood against its task, num_inducing against its
rows) stays in dlm_bench/lgm/plugin.py."""

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..config.capabilities import ModelSpec
from ..config.domains import at_least, one_of, ranged
from ..config.papers import Dotted, Paper
from ..config.stopping import F_TOL, GRAD_TOL, MAX_ITERS

OPTIMIZERS = ("grad", "fpb", "fpi", "fpi_mean")  # lgm/optim.py optimise
REAL_LIKELIHOODS = ("gaussian", "laplace", "student_t")  # of real-valued targets (lgm/frozen_hyperparameters.py)
MAX_VAR = 1e6  # variances and scales of standardised inputs / latents: beyond, Cholesky overflows


def _variance(message=f"{{key}} must be a finite number > 0 and <= {MAX_VAR:g} or null, got {{value}}"):
    return ranged(None, message, low=0, low_open=True, high=MAX_VAR, finite=True, nullable=True)


def _tolerance(default):
    return ranged(default, "{key} must be a finite number >= 0, got {value}", low=0, finite=True)


@dataclass
class LgmConfig:
    """Extended-LGM runs (model=lgm_glm|lgm_gp|lgm_sparse; Sheth & Khardon 2016, dlm_bench/lgm)."""

    optimizer: str = one_of("fpi", OPTIMIZERS, f"unknown {{key}} {{value!r}}; valid choices: {', '.join(OPTIMIZERS)}")
    # gaussian | poisson | laplace | logistic | probit | student_t (the LGM sites but ordinal); null: by task
    likelihood: Optional[str] = None
    # likelihood: null on a regression task (counts: poisson, binary: logistic)
    real_likelihood: str = one_of("gaussian", REAL_LIKELIHOODS,
                                  f"{{key}} must be one of {', '.join(REAL_LIKELIHOODS)}, got {{value!r}}")
    prior_var: Optional[float] = _variance()  # GLM: Sigma = prior_var I; null: 0.1, flares 0.001 (paper L197)
    init_var: Optional[float] = _variance()  # V0 = init_var I; null: 0.1 for counts, 1 otherwise (paper L199)
    subsample: Optional[int] = at_least(None, 2, nullable=True)  # random rows (GP panels: 500)
    num_inducing: int = at_least(100)  # lgm_sparse: random fixed inducing inputs
    hyper_points: int = at_least(200)  # random points for the hyperparameter estimate
    # GP kernels: a fixed RBF lengthscale / outputscale (sf^2) instead of the estimate (null: estimated). Fig. 1(c)'s
    # picture depends on sf^2 and the paper's GPML fit is not reproducible exactly (docs/reproductions/fp_fig1).
    lengthscale: Optional[float] = _variance()
    outputscale: Optional[float] = _variance()
    # relative to the outputscale, on K / K_uu
    jitter: float = ranged(1e-8, "{key} is relative to the outputscale and must be a finite number >= 0 and < 1, "
                           "got {value}", low=0, high=1, high_open=True, finite=True)
    grad_tol: float = _tolerance(GRAD_TOL)  # stopping rule: config/stopping.py
    f_tol: float = _tolerance(F_TOL)
    max_iters: int = at_least(MAX_ITERS)


_PLUGIN = "dlm_bench.lgm.plugin"

PAPER = Paper(
    name="fp",
    models=tuple(
        ModelSpec(name, ("elbo",), execute=Dotted(f"{_PLUGIN}:execute"), check_config=Dotted(f"{_PLUGIN}:check_config"),
                  check_data=Dotted(f"{_PLUGIN}:check_data"), own_loop=True, own_objective="vlb", paper="fp",
                  label=lambda cfg: cfg.lgm.optimizer, config_section="lgm",
                  description=f"extended LGM, {kind} (dlm_bench/lgm)")
        for name, kind in (("lgm_glm", "GLM"), ("lgm_gp", "full GP"), ("lgm_sparse", "sparse GP, fixed inducing inputs"))),
    sections={"lgm": LgmConfig},
    layouts=Path(__file__).with_suffix(".yaml"),
)
