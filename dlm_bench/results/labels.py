"""How runs are named for people: the method label of run.json and of every report. A leaf (no torch), so the report
stage can label runs written before run.json had a `method` field without loading any model code.

Which models are collapsed and which have their own fit loop is read from the papers' declarations
(config/papers.py: their ModelSpecs, light, no torch), so a new paper's models are labelled without an edit here.
"""

from __future__ import annotations

from ..config.papers import model_specs


def collapsed_models() -> frozenset[str]:
    """Models named by the model alone (sgpr, fitc)."""
    return frozenset(spec.name for spec in model_specs() if spec.collapsed)


def own_loop_models() -> frozenset[str]:
    """Models named by model-variant (the FP optimiser, the sggpm method, the SAVIGP posterior, a new paper's)."""
    return frozenset(spec.name for spec in model_specs() if spec.own_loop)


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
    if model in own_loop_models():
        return method_label(model, None, None, None, variant=rec.get("objective"))
    return method_label(model, rec.get("objective"), rec.get("hyperparameters"), rec.get("estimator"),
                        collapsed=model in collapsed_models())


def record_variant(rec: dict) -> str | None:
    """The variant of an own-loop model's run (fpi, fp_sparse, mog2): what its paper's report groups by."""
    if rec.get("model") not in own_loop_models():
        return None
    return record_method(rec).split("-", 1)[1]
