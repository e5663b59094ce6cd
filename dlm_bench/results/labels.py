"""How runs are named for people: the method label of run.json and of every report. A leaf (no torch), so the report
stage can label runs written before run.json had a `method` field without loading any model code.

The registry (dlm_bench/registry.py) is the source of which models are collapsed and which have their own fit loop;
the two sets below are its values frozen for old records, and tests/unit/test_layers.py keeps them equal.
"""

from __future__ import annotations

COLLAPSED_MODELS = frozenset({"sgpr", "fitc"})  # named by the model alone
OWN_LOOP_MODELS = frozenset({"lgm_glm", "lgm_gp", "lgm_sparse", "savigp", "sggpm"})  # named by model-variant


def method_label(model: str | None, objective: str | None, hyperparameters: str | None, estimator: str | None,
                 collapsed: bool = False, variant: str | None = None) -> str:
    """One name per method: a collapsed model by its name; a model with its own fit loop by model-variant (the
    optimiser, the sggpm method, the SAVIGP posterior); otherwise model-objective, '-fixed' for fixed
    hyperparameters, and the estimator when it is not exact."""
    if variant is not None:
        return f"{model}-{variant}"
    label = model if collapsed else f"{model}-{objective}"
    if hyperparameters == "fixed":
        label += "-fixed"
    if estimator not in (None, "exact"):
        label += f"-{estimator}"
    return label


def record_method(rec: dict) -> str:
    """The method of a parsed run.json: its `method` field, or for records written before it existed the label
    derived from its fields (own-loop models kept their variant in `objective` then)."""
    if rec.get("method"):
        return rec["method"]
    model = rec.get("model")
    if model in OWN_LOOP_MODELS:
        return method_label(model, None, None, None, variant=rec.get("objective"))
    return method_label(model, rec.get("objective"), rec.get("hyperparameters"), rec.get("estimator"),
                        collapsed=model in COLLAPSED_MODELS)


def record_variant(rec: dict) -> str | None:
    """The variant of an own-loop model's run (fpi, fp_sparse, mog2): what its paper's report groups by."""
    if rec.get("model") not in OWN_LOOP_MODELS:
        return None
    return record_method(rec).split("-", 1)[1]
