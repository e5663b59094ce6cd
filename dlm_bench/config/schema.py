"""Structured config schemas, registered in Hydra's ConfigStore.

`conf/config.yaml` starts its defaults list with `base_config`, so every group file and every
command-line override is merged into these typed nodes: unknown keys and bad values are rejected
by OmegaConf before anything runs.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import List, Optional

from ..errors import ConfigError
from .domains import at_least, one_of, ranged


# GPyTorch GaussianLikelihood's default noise constraint GreaterThan(1e-4): the floor of every run before model.noise_floor
GPYTORCH_NOISE_FLOOR = 1e-4


class Kernel(Enum):
    rbf = "rbf"
    matern = "matern"


class MeanFunction(Enum):
    zero = "zero"
    constant = "constant"
    auto = "auto"  # resolved per run (dlm_bench/task_defaults.py): constant for binary tasks, zero otherwise


class InducingInit(Enum):
    random = "random"  # a random subset of the training inputs
    kmeans = "kmeans"  # k-means centres of the training inputs


class Hyperparameters(Enum):
    joint = "joint"  # hyperparameters and Z learned with the objective itself
    fixed = "fixed"  # taken from a fully trained SVGP (ELBO, beta=1) and frozen (Wei et al. 2021, sec. 6)


class Device(Enum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


class DType(Enum):
    float32 = "float32"
    float64 = "float64"


class Optimizer(Enum):
    adam = "adam"
    lbfgs = "lbfgs"  # full batch; one iteration with a strong-Wolfe line search per step


class Progress(Enum):
    auto = "auto"  # a progress bar when stderr is a TTY
    on = "on"
    off = "off"
    lines = "lines"  # a "still training" line every few minutes (a sweep's default: logline.Heartbeat)


class PacLoss(Enum):
    zero_one = "zero_one"  # 1[|y - f| > epsilon] (Reeb et al. 2018, eq. 18; the paper's default)
    clipped_square = "clipped_square"  # min(((y - f)/epsilon)^2, 1) (eq. 19)
    exp = "exp"  # inverted Gaussian l_exp = 1 - exp(-((y - f)/epsilon)^2) (eq. 20, Table 3)
    relative = "relative"  # 1[|y - f| > epsilon |y|] (eq. 21 with r_pm(y) = y +- epsilon |y|)


class SparseQ(Enum):
    fitc = "fitc"  # q(u) of eq. 11 with alpha = 1 (the paper's PAC-SGP)
    vfe = "vfe"  # eq. 11 with alpha = 0
    free = "free"  # free-form a_M, B_MM = L L^T


@dataclass
class DatasetConfig:
    name: str = "boston"
    # name=csv: the user's own CSV / parquet file; a named dataset: local copies of its files (data/api.py local_sources)
    path: Optional[str] = None
    target: Optional[str] = None  # column name (or integer position)
    task: Optional[str] = None  # regression | binary | multiclass | count | ordinal
    # feature columns to dummy-code even if they hold numbers, e.g. dataset.categorical=[zip,grade]; a column that
    # mixes numbers and text is refused unless listed here (dlm_bench/data/user.py)
    categorical: Optional[List[str]] = None


@dataclass
class ModelConfig:
    name: str = "svgp"
    kernel: Kernel = Kernel.rbf
    matern_nu: float = one_of(2.5, (0.5, 1.5, 2.5), "{key} must be 0.5, 1.5 or 2.5, got {value}")
    ard: bool = False
    mean: MeanFunction = MeanFunction.zero
    num_inducing: int = at_least(50)
    # M from the data set's size by a rule of dlm_bench/models/num_inducing_rules.yaml (dlm_table1: the DLM paper's
    # Table 1, M = N/100 up to 200), resolved per run into num_inducing; null: num_inducing as given
    num_inducing_rule: Optional[str] = None
    inducing_init: InducingInit = InducingInit.random
    learn_inducing: bool = True
    whiten: bool = True
    noise_init: float = ranged(0.1)
    # Lower bound of the Gaussian noise variance (GPyTorch's GreaterThan constraint; 1e-4 is GPyTorch's own default).
    # PAC_GP and GPflow 1.x put it at 1e-6: Reeb et al.'s FITC optima "~1e-6" (App. E) are that floor.
    noise_floor: float = ranged(GPYTORCH_NOISE_FLOOR)
    lengthscale_init: float = ranged(1.0)
    outputscale_init: float = ranged(1.0)
    # Observation model (dlm_bench/likelihoods): gaussian | student_t | probit | logistic | poisson_exp |
    # poisson_softplus; None: by the dataset's task (regression gaussian, binary probit, count poisson_exp)
    likelihood: Optional[str] = None


@dataclass
class ObjectiveConfig:
    name: str = "elbo"
    beta: float = ranged(1.0)
    # Index k into the DLM paper's grid [n, n/2, n/4, ...] (n = training size): beta = n / 2^k; overrides
    # `beta` when set. Sweep with e.g. objective.beta_index='range(0,20)'; points below min_beta are skipped.
    beta_index: Optional[int] = at_least(None, 0, nullable=True)
    min_beta: float = ranged(0.01)
    # false for methods without a beta (ELBO at beta=1, SGPR, FITC): in a beta_index sweep they run once
    beta_grid: bool = True
    hyperparameters: Hyperparameters = Hyperparameters.joint
    # hyperparameters=fixed: the stage-1 model whose kernel, noise and Z are frozen. auto: the collapsed SGPR
    # (Titsias) for a Gaussian likelihood with a zero mean (the DLM paper's regression, upstream
    # conjugate/script.py get_base_model), SVGP + ELBO otherwise; svgp | sgpr to choose (docs/dlm_fidelity.md)
    pretrain_model: str = one_of("auto", ("auto", "svgp", "sgpr"), "{key} must be auto, svgp or sgpr, got {value!r}")
    # hyperparameters=fixed: the beta of the stage-1 ELBO. one: beta = 1 (upstream's dlm_sgp get_base_model);
    # same: the run's own beta, a beta-SVGP stage 1 (one reading of the paper's "from SVGP", 000 L266; needs
    # pretrain_model=svgp, the collapsed SGPR has no beta; docs/dlm_fidelity.md)
    pretrain_beta: str = one_of("one", ("one", "same"), "{key} must be one or same, got {value!r}")
    pretrain_epochs: Optional[int] = at_least(None, nullable=True)  # stage-1 epochs in minibatch mode; None: trainer.epochs (airline: 20)
    # train every beta of the group (same config, other beta_index) in one batched model and write one run
    # directory per beta, named as unbatched (dlm_bench/run/batched.py); not part of run names
    beta_batch: bool = False


@dataclass
class EstimatorConfig:
    name: str = "exact"
    num_samples: Optional[int] = None  # sampling estimators (bmc, smooth_bmc, ups): samples L per point; else null
    nu: Optional[float] = None  # estimator=smooth_bmc: smoothing constant in the denominator (null: 1e-4)


@dataclass
class TrainerConfig:
    optimizer: Optimizer = Optimizer.adam
    lr: float = ranged(0.1)
    batch_size: Optional[int] = at_least(None, nullable=True)  # None: full batch
    epochs: Optional[int] = at_least(None, nullable=True)  # minibatch mode only; None: until max_iters
    max_iters: int = at_least(5000)
    window: int = at_least(50)
    # a negative tol switches the stopping rule off (learning curves)
    tol: float = ranged(1e-4, "{key} must be a finite number (negative: never stop early), got {value}", finite=True)
    # what the tolerance applies to: mean (the loss / N, as trained) or sum (the loss x N: upstream's
    # regression code, N times stricter); docs/dlm_fidelity.md
    tol_on: str = one_of("mean", ("mean", "sum"), "{key} must be mean or sum, got {value!r}")
    # Adam's learning rate when minibatches are in use (batch_size < N); None: lr. The DLM paper: 1e-3
    stochastic_lr: Optional[float] = ranged(None, low=0, low_open=True, finite=True, nullable=True)
    progress: Progress = Progress.auto
    # every k iterations, also record test metrics (test_nll, test_mse) in curve.csv (learning curves)
    track_every: Optional[int] = at_least(None, nullable=True)
    # seconds of training between checkpoints (training/checkpoint.py: a killed run resumes from the last one);
    # 0: none. Where a run goes, not what it computes: not in run names (run/naming.py)
    checkpoint_every_s: float = ranged(300.0, "{key} must be a finite number >= 0 (0: no checkpoints), got {value}",
                                       low=0, finite=True)


@dataclass
class ProtocolConfig:
    name: str = "dlm_regression"
    train_frac: float = ranged(0.67, "{key} must be in (0, 1), got {value}", low=0, low_open=True, high=1,
                               high_open=True, finite=True)
    val_frac: float = ranged(0.08, "{key} must be in [0, 1), got {value}", low=0, high=1, high_open=True, finite=True)
    train_size: Optional[int] = at_least(None, nullable=True)  # subsample of the training part
    test_size: Optional[int] = at_least(None, nullable=True)  # cap on the test part
    # protocol=pac: train on every stride-th row (0, stride, 2 stride, ...), test on the rest, the same for every seed
    # (Reeb et al. 2018 App. E: "every second one" of snelson); overrides train_frac. null: a random train_frac split.
    stride: Optional[int] = at_least(None, 2, nullable=True)
    normalize_x: bool = True
    normalize_y: bool = True


@dataclass
class PacConfig:
    """PAC-GP paper (Reeb et al. 2018): loss, bound and hyperparameter grid. Used by objective=pac_kl|pac_sqrt
    and, with eval.pac=true (set by the PAC experiments), by the evaluation of every method (bound, Gibbs risks, KL/N with rounded theta)."""

    epsilon: float = ranged(0.6)  # scale of the loss (accuracy goal, in standardised target units)
    loss: PacLoss = PacLoss.zero_one
    delta: float = ranged(0.01, "{key} must be in (0, 1], got {value}", low=0, low_open=True,
                          high=1)  # the bound holds with probability >= 1 - delta
    grid_L: float = ranged(6.0)  # ln theta rounded to {-L, -L + 2L/G, ..., L}
    grid_G: int = at_least(1200)
    # App. F: r decimals, i.e. G = 2 L 10^r (overrides grid_G when set)
    round_digits: Optional[int] = ranged(None, "{key} must be in 0..8 or null, got {value}", low=0, high=8,
                                         nullable=True)
    round: bool = True  # round ln theta to the grid before evaluating (False: continuous theta, no valid bound)
    sparse_q: SparseQ = SparseQ.fitc  # model=pac_sgp: how Q(f_M) is parametrised


@dataclass
class EvalConfig:
    """Opt-in evaluations beyond the likelihood's predictive metrics."""

    pac: bool = False  # PAC-Bayes bound, Gibbs risks and KL/N with rounded theta (Reeb et al. 2018); implied by
    # eval.pac=true and by the PAC-Bayes objectives


@dataclass
class LauncherConfig:
    """How `dlm-bench sweep` runs its jobs (ignored by `dlm-bench run`)."""

    name: str = "local"  # local | joblib | slurm
    n_jobs: int = at_least(1)  # joblib: parallel processes
    cpus: Optional[int] = at_least(None, nullable=True)  # per job; torch threads. None: all cores / n_jobs
    partition: Optional[str] = None  # slurm
    time_min: int = 60
    mem_gb: Optional[int] = 4
    gpus: int = 0
    array_parallelism: int = 256
    setup: list[str] = field(default_factory=list)  # shell lines run before each slurm job
    # slurm: SLURM warns a job this many seconds before its time limit (sbatch --signal=USR2@s); the job then saves
    # its training checkpoint and requeues itself (submitit), at most max_requeues times; the rerun resumes
    signal_delay_s: int = at_least(120, low=0)
    max_requeues: int = at_least(3, low=0)


@dataclass
class ResumeConfig:
    """Which existing run directories a sweep re-runs (default: none; ok, diverged and failed are kept)."""

    force: bool = False  # re-run everything
    retry_failed: bool = False  # re-run runs whose run.json says failed


@dataclass
class CommonConfig:
    """The settings every run has; Config adds the sections the papers declare (dlm_bench/papers/)."""

    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    objective: ObjectiveConfig = field(default_factory=ObjectiveConfig)
    estimator: EstimatorConfig = field(default_factory=EstimatorConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    launcher: LauncherConfig = field(default_factory=LauncherConfig)
    resume: ResumeConfig = field(default_factory=ResumeConfig)
    pac: PacConfig = field(default_factory=PacConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    # after eval: each paper's own sections (lgm, savigp, sggpm, ...), added by with_paper_sections below
    paper: str = "dlm"
    experiment: str = "default"
    report: Optional[str] = None  # the report layout (a paper's dlm_bench/papers/<paper>.yaml) an experiment's runs are drawn with
    seed: int = 0
    device: Device = Device.auto
    dtype: DType = DType.float64
    results_dir: str = "results"
    run_dir: Optional[str] = None  # None: <results_dir>/<experiment>/<name derived from the config>


def with_paper_sections():
    """The full config schema: CommonConfig's fields, and after `eval` each declared paper's own sections
    (dlm_bench/papers/: discovered; LgmConfig, SggpmConfig and SavigpConfig live in their declarations)."""
    from .papers import config_sections

    fields = []
    for f in dataclasses.fields(CommonConfig):
        default = ({"default_factory": f.default_factory} if f.default_factory is not dataclasses.MISSING
                   else {"default": f.default})
        fields.append((f.name, f.type, field(**default)))
        if f.name == "eval":
            fields += [(name, cls, field(default_factory=cls)) for name, cls in config_sections().items()]
    config = dataclasses.make_dataclass("Config", fields)
    config.__module__ = __name__  # its string annotations resolve in this module (OmegaConf's get_type_hints)
    return config


Config = with_paper_sections()


def check_domains(cfg: DictConfig, sections: tuple[str, ...]) -> None:
    """Every setting of `sections` within the Domain its field declares (ranges, choices, nan and inf included); the
    first one outside is a ConfigError with the field's own message. The one place range and choice checks run:
    registry/validation.py validate_numbers calls it for the common sections, savigp/plugin.py for savigp.*."""
    classes = {f.name: f.default_factory for f in dataclasses.fields(Config)
               if f.default_factory is not dataclasses.MISSING}
    for section in sections:
        node = cfg[section]
        for f in dataclasses.fields(classes[section]):
            domain = f.metadata.get("domain")
            if domain is not None and not domain.allows(node[f.name]):
                raise ConfigError(domain.message.format(key=f"{section}.{f.name}", value=node[f.name]))


GROUPS = ("dataset", "model", "objective", "estimator", "trainer", "protocol", "launcher")
# Sweep helpers (# @package _global_, after `experiment` in the defaults list): `dlm_data` = a dataset with
# the DLM paper's M; `method` = an objective + estimator + hyperparameter combination
GROUPS += ("dlm_data", "method")


def register_paper_options(cs) -> None:
    """The options papers keep in their own conf folder (dlm_bench/papers/: Paper.conf), one per YAML file; a file
    starting `# @package _global_` (an experiment) is merged at the top like conf/experiment/*.yaml."""
    from omegaconf import OmegaConf

    from .papers import conf_files

    for group in GROUPS + ("experiment",):
        for name, path in conf_files(group).items():
            text = path.read_text()
            package = "_global_" if text.lstrip().startswith("# @package _global_") else group
            cs.store(group=group, name=name, node=OmegaConf.create(text), package=package)


def dataset_options() -> list[str]:
    """The `dataset` group's options: the registered datasets' names, read from the dataset manifest itself
    (dlm_bench/data/catalog.yaml, the file data/catalog.py registers) without loading the data package and its
    parsers, plus `csv` (the user's own table). tests/unit/config/test_light_names.py checks it against DATASETS."""
    return sorted([*manifest_names(), "csv"])


def manifest_names() -> list[str]:
    text = (Path(__file__).resolve().parents[1] / "data" / "catalog.yaml").read_text()
    section = re.search(r"^datasets:\s*$(.*?)(?=^\S|\Z)", text, re.M | re.S)
    return re.findall(r"^  ([A-Za-z0-9_]+):", section.group(1), re.M) if section else []


def conf_dir() -> Path:
    """The config tree: the package copy when installed (dlm_bench.conf, pyproject.toml's package-dir), else the
    repository's conf/ beside dlm_bench/ (a plain checkout on PYTHONPATH). Neither: one line saying to install."""
    try:
        path = Path(str(resources.files("dlm_bench.conf")))
        if (path / "config.yaml").is_file():
            return path
    except ModuleNotFoundError:
        pass
    path = Path(__file__).resolve().parents[2] / "conf"
    if not (path / "config.yaml").is_file():
        raise ConfigError(f"the config tree (conf/config.yaml) is neither installed as dlm_bench.conf nor at {path}: "
                          "run `make install` (pip install -e .) in the repository")
    return path


def group_options(group: str) -> list[str]:
    if group == "dataset":  # generated from the dataset registry (sweeps/compose.py register_configs)
        return dataset_options()
    from .papers import conf_files

    return sorted({p.stem for p in (conf_dir() / group).glob("*.yaml")} | set(conf_files(group)))
