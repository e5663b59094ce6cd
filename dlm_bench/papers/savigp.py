"""Dezfouli & Bonilla (2015), SAVIGP: Q latent GPs, FG / MoG posteriors, black-box likelihoods (savigp.*). Its config
section, SavigpConfig, lives here with its range metadata (config/domains.py); what depends on the dataset or on
another field stays in dlm_bench/savigp/plugin.py."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..config.capabilities import ModelSpec
from ..config.domains import at_least, one_of, ranged
from ..config.papers import Dotted, Paper

MAX_SAMPLES = 100_000  # savigp: Monte Carlo samples per point (the paper: 2000); beyond, the sample tensors exhaust memory
MAX_COMPONENTS = 100  # savigp: MoG components (the paper: 1, 2)
SAVIGP_TRANSFORMS = ("none", "center", "minmax")


@dataclass
class SavigpConfig:
    """model=savigp (Dezfouli & Bonilla 2015; dlm_bench/savigp, docs/savigp.md). Dropped from run names otherwise."""

    posterior: str = "fg"  # fg (one full Gaussian per process) | mog (K diagonal components)
    components: int = ranged(1, f"{{key}} must be an integer in [1, {MAX_COMPONENTS}], got {{value}}", low=1,
                             high=MAX_COMPONENTS)  # K for posterior=mog (MoG1, MoG2)
    estimator: str = "score_cv"  # score_cv | score | reparam | exact (closed-form E[log p]: gaussian, warp, lgcp)
    num_samples: int = ranged(2000, f"{{key}} must be an integer in [2, {MAX_SAMPLES}], got {{value}}", low=2,
                              high=MAX_SAMPLES)  # S, Monte Carlo samples per point for L_ell and its gradients
    cv_samples: Optional[int] = None  # samples estimating the control-variate a-hat (null: S/10)
    cv_holdout: bool = False  # true: average the corrected gradient over the other samples only (unbiased)
    resample: bool = False  # false: one fixed sample set (upstream); true: new samples before every block
    sample_seed: int = ranged(12000, "{key} must be an integer >= 0 and < 2**62, got {value}", low=0, high=2**62,
                              high_open=True)  # upstream's seed for the fixed samples (+ run seed)
    entropy: str = "bound"  # bound (eqs. 1-3) | exact (posterior=fg only)
    sparsity_factor: float = ranged(1.0, "{key} must be in (0, 1], got {value}", low=0, low_open=True, high=1,
                                    finite=True)  # SF = M / N
    # M, overrides sparsity_factor (MNIST: 200)
    num_inducing: Optional[int] = ranged(None, "{key} must be >= 1 or null, got {value}", low=1, nullable=True)
    # nested (random subsets, nested across SF) | kmeans
    inducing: str = one_of("nested", ("nested", "kmeans"), "{key} must be nested or kmeans, got {value!r}")
    likelihood: str = "gaussian"  # gaussian | warp | softmax | logistic | lgcp
    warp: str = "creep"  # fixed warping parameters of upstream's experiment_setup.py: creep | abalone
    offset: float = ranged(1.0)  # lgcp: exposure of each bin
    # target transform: none | center | minmax (NLPD reported in raw units)
    transform: str = one_of("none", SAVIGP_TRANSFORMS, "{key} must be one of none, center, minmax, got {value!r}")
    ard: bool = False
    x_scale: float = ranged(1.0)  # inputs multiplied by this after the protocol's normalisation (MNIST: 1/255, pixels in [0, 1])
    latent_noise: float = ranged(1.0e-3)  # white noise on every kernel (upstream)
    lengthscale_init: float = ranged(1.0)
    variance_init: float = ranged(1.0)
    noise_init: float = ranged(1.0)  # sigma^2 of the gaussian / warp likelihood
    optimizer: str = one_of("lbfgs", ("lbfgs", "adam"), "{key} must be lbfgs or adam, got {value!r}")
    lr: float = ranged(0.01)  # adam only
    blocks: list[str] = field(default_factory=lambda: ["mog", "hyp", "ll"])
    evals_mog: int = at_least(25)  # function evaluations (L-BFGS) or steps (Adam) per block and global iteration
    evals_hyp: int = at_least(25)
    evals_ll: int = at_least(25)
    evals_inducing: int = at_least(25)  # blocks: [..., inducing] learns Z (upstream MNIST_binary_inducing_data: 6)
    max_iter: int = ranged(200, "{key} must be >= 1, got {value}", low=1)  # global iterations
    xtol: float = ranged(1.0e-3, "{key} must be a finite number >= 0, got {value}", low=0, finite=True)
    ftol: float = ranged(1.0e-5, "{key} must be a finite number >= 0, got {value}", low=0, finite=True)
    # stop after the first global iteration past this wall time
    max_wall_s: Optional[float] = ranged(None, "{key} must be a finite number > 0 or null, got {value}", low=0,
                                         low_open=True, finite=True, nullable=True)
    pred_samples: int = ranged(2000, f"{{key}} must be an integer in [2, {MAX_SAMPLES}], got {{value}}", low=2,
                               high=MAX_SAMPLES)  # Monte Carlo samples for the predictive densities of non-Gaussian likelihoods
    track: bool = False  # record test ER/NLP (or SSE/NLPD) in curve.csv after every global iteration (Fig. 4)


_PLUGIN = "dlm_bench.savigp.plugin"

PAPER = Paper(
    name="savigp",
    models=(ModelSpec("savigp", ("elbo",), execute=Dotted(f"{_PLUGIN}:execute"),
                      check_config=Dotted(f"{_PLUGIN}:check_config"), check_data=Dotted(f"{_PLUGIN}:check_data"),
                      own_loop=True, own_objective="elbo", paper="savigp", config_section="savigp", checkpoints=True,
                      fit_size=Dotted(f"{_PLUGIN}:fit_size"), size_keys=("savigp.num_inducing", "savigp.sparsity_factor"),
                      label=lambda cfg: f"{cfg.savigp.posterior}{cfg.savigp.components if cfg.savigp.posterior == 'mog' else ''}",
                      description="SAVIGP (dlm_bench/savigp)"),),
    sections={"savigp": SavigpConfig},
    layouts=Path(__file__).with_suffix(".yaml"),
)
