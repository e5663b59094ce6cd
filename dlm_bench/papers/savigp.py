"""Dezfouli & Bonilla (2015), SAVIGP: Q latent GPs, FG / MoG posteriors, black-box likelihoods (savigp.*)."""

from pathlib import Path

from ..config.capabilities import ModelSpec
from ..config.papers import Dotted, Paper

_PLUGIN = "dlm_bench.savigp.plugin"

PAPER = Paper(
    name="savigp",
    models=(ModelSpec("savigp", ("elbo",), execute=Dotted(f"{_PLUGIN}:execute"),
                      check_config=Dotted(f"{_PLUGIN}:check_config"), check_data=Dotted(f"{_PLUGIN}:check_data"),
                      own_loop=True, own_objective="elbo", paper="savigp", config_section="savigp", checkpoints=True,
                      fit_size=Dotted(f"{_PLUGIN}:fit_size"), size_keys=("savigp.num_inducing", "savigp.sparsity_factor"),
                      label=lambda cfg: f"{cfg.savigp.posterior}{cfg.savigp.components if cfg.savigp.posterior == 'mog' else ''}",
                      description="SAVIGP (dlm_bench/savigp)"),),
    sections={"savigp": "dlm_bench.config.schema:SavigpConfig"},
    layouts=Path(__file__).with_suffix(".yaml"),
)
