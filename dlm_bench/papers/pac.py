"""Reeb et al. (2018), the PAC-GP paper: full and sparse GPs trained on a PAC-Bayes bound, fitted by the shared
Trainer (dlm_bench/models); the bounds live in dlm_bench/pac."""

from pathlib import Path

from ..config.capabilities import ModelSpec
from ..config.papers import Paper
from .dlm import TRAINER

_PAC = ("pac_kl", "pac_sqrt")

PAPER = Paper(
    name="pac",
    models=(
        ModelSpec("pac_gp", _PAC, **TRAINER, gaussian_only=True, full_batch_only=True, zero_mean_only=True,
                  pac_evaluable=True, trained_on="a PAC-Bayes bound", paper="pac", description="full PAC-GP (Reeb et al. 2018)"),
        ModelSpec("pac_sgp", _PAC, **TRAINER, gaussian_only=True, full_batch_only=True, zero_mean_only=True,
                  pac_evaluable=True, trained_on="a PAC-Bayes bound", paper="pac",
                  description="sparse PAC-SGP (Reeb et al. 2018)"),
    ),
    layouts=Path(__file__).with_suffix(".yaml"),
)
