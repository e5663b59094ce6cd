"""Wei et al. (2021), the DLM paper, and the GPyTorch models fitted by the shared Trainer (dlm_bench/models): SVGP,
SGPR / VFE, FITC and the full GP, every one a baseline of the other papers too."""

from pathlib import Path

from ..config.capabilities import BetaGroup, ModelSpec
from ..config.papers import Dotted, Paper

_PLUGIN = "dlm_bench.models.plugin"
TRAINER = {"execute": Dotted(f"{_PLUGIN}:execute"), "check_config": Dotted(f"{_PLUGIN}:check_config"),
           "check_data": Dotted(f"{_PLUGIN}:check_data"), "checkpoints": True,
           "task_defaults": Dotted("dlm_bench.models.task_defaults:resolve_task_defaults"),
           "name_defaults": Dotted("dlm_bench.models.fixed:resolve_auto_pretrain")}
# the SVGP family's batched beta grid (models/beta_group.py), imported on first use
_GROUP = "dlm_bench.models.beta_group"
BETA_GROUP = BetaGroup(requested=Dotted(f"{_GROUP}:requested"), check=Dotted(f"{_GROUP}:check_supported"),
                       full_batch=Dotted(f"{_GROUP}:_full_batch"), train=Dotted(f"{_GROUP}:train"))

PAPER = Paper(
    name="dlm",
    models=(
        ModelSpec("svgp", ("elbo", "dlm", "sq_dlm"), **TRAINER, beta_group=BETA_GROUP,
                  description="sparse variational GP (Hensman et al. 2015), any likelihood and estimator"),
        ModelSpec("sgpr", ("elbo",), **TRAINER, own_objective="elbo", collapsed=True, gaussian_only=True,
                  full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
                  description="collapsed SGPR / VFE (Titsias 2009)"),
        ModelSpec("fitc", ("elbo",), **TRAINER, own_objective="fitc", collapsed=True, gaussian_only=True,
                  full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
                  description="FITC (Snelson & Ghahramani 2006), collapsed"),
        ModelSpec("exact_gp", ("elbo",), **TRAINER, own_objective="mll", gaussian_only=True,
                  full_batch_only=True, zero_mean_only=True, pac_evaluable=True,
                  description="full GP on its marginal likelihood"),
    ),
    layouts=Path(__file__).with_suffix(".yaml"),
)
