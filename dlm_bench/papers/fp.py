"""Sheth & Khardon (2016), the FP paper: the extended LGM optimised by GRAD / FPb / FPi (lgm.*) with its own fit
loop (dlm_bench/fp)."""

from pathlib import Path

from ..config.capabilities import ModelSpec
from ..config.papers import Dotted, Paper

_PLUGIN = "dlm_bench.fp.plugin"

PAPER = Paper(
    name="fp",
    models=tuple(
        ModelSpec(name, ("elbo",), execute=Dotted(f"{_PLUGIN}:execute"), check_config=Dotted(f"{_PLUGIN}:check_config"),
                  check_data=Dotted(f"{_PLUGIN}:check_data"), own_loop=True, own_objective="vlb", paper="fp",
                  label=lambda cfg: cfg.lgm.optimizer, config_section="lgm",
                  description=f"extended LGM, {kind} (dlm_bench/lgm)")
        for name, kind in (("lgm_glm", "GLM"), ("lgm_gp", "full GP"), ("lgm_sparse", "sparse GP, fixed inducing inputs"))),
    sections={"lgm": "dlm_bench.config.schema:LgmConfig"},
    layouts=Path(__file__).with_suffix(".yaml"),
)
