"""One run of an experiment is a point of its grid: `dlm-bench run experiment=X` takes, for the keys X sweeps
(`hydra.sweeper.params`) that the command line leaves unnamed, the values of the first point that
`dlm-bench sweep experiment=X <same overrides>` runs (BasicSweeper order, skipping points not applicable).

Why: Hydra applies `hydra.sweeper.params` in multirun only, so a plain run of an experiment used the global defaults
for the swept keys (boston, SVGP, ELBO). That run is outside the experiment's grid and was written into the
experiment's results folder, where `dlm-bench report` reads it (`run experiment=dlm_classification` trained a boston
regression), or it was refused (every PAC experiment: the PAC-Bayes evaluation does not apply to SVGP).
"""

from __future__ import annotations

from .plan import first_runnable_point

# A swept key stays unswept when the command line names one of these instead: they set the same thing
# (objective.beta and objective.beta_index both choose beta; a dlm_data preset chooses the dataset).
ALTERNATIVES = {
    "objective.beta_index": ("objective.beta",),
    "dlm_data": ("dataset", "dataset.name"),
    "dataset": ("dlm_data", "dataset.name"),
}


def named_keys(overrides: list[str]) -> set[str]:
    """The keys (and config groups) the overrides set, without Hydra's + / ~ / ++ prefixes."""
    return {o.partition("=")[0].lstrip("+~") for o in overrides if "=" in o}


def experiment_point(overrides: list[str]) -> list[str]:
    """The overrides a single run of `overrides` adds to be its experiment's first runnable grid point (none when no
    experiment is named or every swept key is named)."""
    named = named_keys(overrides)
    if "experiment" not in named:
        return []
    point = first_runnable_point(overrides, leave_out=lambda key: any(a in named for a in ALTERNATIVES.get(key, ())))
    return [o for o in point if o.partition("=")[0].lstrip("+~") not in named]
