"""Estimates for points of models with their own fit loop (SGGPM, SAVIGP) from finished runs of the same settings at
other sizes (`dlm-bench sweep --estimate`, --time-limit).

The cost model (cost_estimate.py) covers only the shared Trainer's models; an own-loop point had an estimate only
once a run of exactly its settings had finished, so a size sweep (SGGPM Fig. 2: 5 active-set sizes) had none for
its larger sizes however many smaller ones were done. Here a point's seconds are read off a power law in its fit
size (the registry's `ModelSpec.fit_size`: SGGPM's active set M, SAVIGP's inducing points) through the finished
runs whose settings differ only in the size keys (`ModelSpec.size_keys`):

- two or more finished sizes: the line through the two nearest sizes in log-log (interpolation between them, or
  extrapolation past the end), its slope clamped to [0, MAX_EXPONENT];
- one finished size: seconds x (size / its size)^DEFAULT_EXPONENT.

Rough by construction: a step costs N M^2, but the iterations to convergence change with M too (musk's grad-sparse
runs at M = 66, 89, 121 took 783, 1566 and 1687 s). Measured on the committed archives (docs/reproductions/*/runs.tgz,
each run of 30 s or more estimated from the smaller sizes of its settings; tests/unit/sweeps/test_cost_estimate.py):
SGGPM 63 runs, median measured / estimated 1.02, 94 % within a factor of 2; SAVIGP 49 runs, 1.06 and 71 %. A
default exponent of 2 (the step's N M^2) gave 0.27 and 8 % for SAVIGP from one size, 1 gives 0.58 and 67 %. The
estimate line counts these points apart ("scaled from finished runs at other sizes (rough)").
"""

from __future__ import annotations

import math
from collections import defaultdict
from statistics import median

DEFAULT_EXPONENT = 1.0
MAX_EXPONENT = 3.0


def _spec(config: dict):
    from ..registry.models import MODELS  # here: the registry imports torch, which a plain settings key does not need

    spec = MODELS.get((config.get("model") or {}).get("name"))
    return spec if spec is not None and spec.fit_size is not None and spec.size_keys else None


def _without(config: dict, dotted: str) -> dict:
    """A copy of `config` without the key at the dotted path (the sections on the way copied, the rest shared)."""
    head, _, rest = dotted.partition(".")
    if head not in config:
        return config
    out = dict(config)
    if rest:
        if isinstance(out[head], dict):
            out[head] = _without(out[head], rest)
    else:
        del out[head]
    return out


def size_key(config: dict, settings_key) -> tuple[str, float] | None:
    """(the point's settings key without its size keys, its fit size), or None (no size rule for its model, or no
    size: e.g. an SGGPM size_index past its grid). settings_key: cost_estimate.settings_key."""
    spec = _spec(config)
    if spec is None:
        return None
    try:
        size = spec.fit_size(config)
    except Exception:  # a point the plan's checks will reject: no estimate rather than a failed plan
        return None
    if not size or size <= 0:
        return None
    stripped = config
    for k in spec.size_keys:
        stripped = _without(stripped, k)
    return settings_key(stripped), float(size)


def scaled_seconds(finished: list[tuple[float, float]], size: float) -> float | None:
    """Seconds at `size` from finished (size, seconds) pairs of the same settings (see the module docstring)."""
    by_size = defaultdict(list)
    for s, sec in finished:
        if s > 0 and sec > 0:
            by_size[s].append(sec)
    if not by_size:
        return None
    sizes = sorted(by_size, key=lambda s: (abs(math.log(s / size)), s))
    near = sizes[0]
    t_near = median(by_size[near])
    if len(sizes) == 1:
        slope = DEFAULT_EXPONENT
    else:
        other = sizes[1]
        slope = math.log(median(by_size[other]) / t_near) / math.log(other / near)
        slope = min(max(slope, 0.0), MAX_EXPONENT)
    return t_near * (size / near) ** slope
