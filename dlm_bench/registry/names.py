"""The registries' names, without their plugins: `dlm-bench experiments`, `--help` and shell completion list them
and must not load torch and gpytorch, which the model families and objectives import (registry/models.py MODELS,
objectives/__init__.py OBJECTIVES). The registries stay the truth: tests/unit/config/test_light_names.py fails
when a name is added to one and not here."""

MODEL_NAMES = ("svgp", "sgpr", "fitc", "exact_gp", "pac_gp", "pac_sgp", "lgm_glm", "lgm_gp", "lgm_sparse", "savigp",
               "sggpm")
OBJECTIVE_NAMES = ("elbo", "dlm", "sq_dlm", "pac_kl", "pac_sqrt")
