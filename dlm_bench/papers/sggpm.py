"""Sheth, Wang & Khardon (2015), SGGPM: sparse / SoD GGPM, Laplace, grad, dual, FP (sggpm.*)."""

from pathlib import Path

from ..config.capabilities import ModelSpec
from ..config.papers import Dotted, Paper

_PLUGIN = "dlm_bench.sggpm.plugin"

PAPER = Paper(
    name="sggpm",
    models=(ModelSpec("sggpm", ("elbo",), execute=Dotted(f"{_PLUGIN}:execute"),
                      check_config=Dotted(f"{_PLUGIN}:check_config"), check_data=Dotted(f"{_PLUGIN}:check_data"),
                      own_loop=True, own_objective="vlb", paper="sggpm", config_section="sggpm", checkpoints=True,
                      fit_size=Dotted(f"{_PLUGIN}:fit_size"), size_keys=("sggpm.size_index",),
                      label=lambda cfg: cfg.sggpm.method, description="sparse variational GGPM (dlm_bench/sggpm)"),),
    sections={"sggpm": "dlm_bench.config.schema:SggpmConfig"},
    layouts=Path(__file__).with_suffix(".yaml"),
)
