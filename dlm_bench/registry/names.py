"""The registries' names, without their plugins: `dlm-bench experiments`, `--help` and shell completion list them
and must not load torch and gpytorch, which the model families and objectives import (registry/models.py MODELS,
objectives/__init__.py OBJECTIVES). The registries stay the truth: model names come from the paper declarations (config/papers.py), which import no
plugin; tests/unit/config/test_light_names.py fails when an objective is added to OBJECTIVES and not here."""

from ..config.papers import model_specs

MODEL_NAMES = tuple(spec.name for spec in model_specs())  # the paper declarations (light: no plugin is imported)
OBJECTIVE_NAMES = ("elbo", "dlm", "sq_dlm", "pac_kl", "pac_sqrt")
