"""Learned parameters that ended at their constraint's floor or ceiling (GPyTorch's `Interval` / `GreaterThan` /
`LessThan` on the raw parameters). Such a run optimised into a wall, not to an interior optimum: the default DLM runs
on boston end at noise = 1e-4, GaussianLikelihood's floor. run.json records them (`train.at_bound`) and the run line
names them, so the wall is not mistaken for a learned value."""

from __future__ import annotations

import math

import gpytorch
import torch

# "At" a bound: within this fraction of a two-sided interval's width, or of a one-sided bound's magnitude. Values
# cannot reach a bound exactly (the transforms are asymptotic), so equality would never fire.
REL_TOL = 1e-2


def _near(value: float, bound: float, scale: float) -> bool:
    return math.isfinite(bound) and scale > 0 and abs(value - bound) <= REL_TOL * scale


def parameters_at_bounds(module: torch.nn.Module) -> dict[str, dict]:
    """{parameter name: {"bound": "floor" | "ceiling", "limit": the bound, "value": the value (the element closest to
    the bound for a vector, e.g. ARD lengthscales), "count": elements at the bound}} for every trainable constrained
    parameter at a nonzero or two-sided bound. A floor of 0 (Positive()) is not a wall: a positive quantity tending
    to 0 is a finding of its own, shown by its value."""
    out = {}
    for mname, m in module.named_modules():
        if not isinstance(m, gpytorch.Module):
            continue
        for cname, c in m.named_constraints():
            if "." in cname or not cname.endswith("_constraint"):
                continue  # a child's constraint: visited with the child
            raw = getattr(m, cname[: -len("_constraint")], None)
            if not isinstance(raw, torch.nn.Parameter) or not raw.requires_grad:
                continue
            with torch.no_grad():
                value = c.transform(raw).detach().reshape(-1).double().cpu()
            lo, hi = float(c.lower_bound.reshape(-1)[0]), float(c.upper_bound.reshape(-1)[0])
            width = hi - lo if math.isfinite(lo) and math.isfinite(hi) else None
            name = f"{mname}.{cname[len('raw_'):-len('_constraint')]}".lstrip(".")
            for bound, limit in (("floor", lo), ("ceiling", hi)):
                if limit == 0.0 and width is None:
                    continue
                scale = width if width is not None else abs(limit)
                hits = [float(v) for v in value if _near(float(v), limit, scale)]
                if hits:
                    closest = min(hits, key=lambda v: abs(v - limit))
                    out[name] = {"bound": bound, "limit": limit, "value": closest, "count": len(hits)}
    return out


def at_bound_text(at_bound: dict[str, dict]) -> str | None:
    """run.json's `train.at_bound` and the run line's words, e.g. `likelihood.noise_covar.noise=0.000100425 at its
    floor 0.0001`; None when no parameter is at a bound. A string, not an object: report tables take train.* as
    columns, and a text column stays one value per run."""
    if not at_bound:
        return None
    return "; ".join(f"{name}={d['value']:.6g} at its {d['bound']} {d['limit']:g}"
                     + (f" ({d['count']} elements)" if d["count"] > 1 else "") for name, d in at_bound.items())
