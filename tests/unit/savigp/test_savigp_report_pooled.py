"""savigp/report.py pooled_stats: the numbers behind the box plots, checked against matplotlib's own box statistics
(matplotlib.cbook.boxplot_stats, what Axes.boxplot draws) and numpy, on skewed per-point data of two splits."""

import numpy as np
import pandas as pd
from matplotlib import cbook

from dlm_bench.savigp.report import pooled_stats


def test_pooled_stats_are_the_box_plot_statistics():
    rng = np.random.default_rng(0)
    frames = []
    for variant in ("fg", "mog1"):
        for sf in (1.0, 0.1):
            for seed in (0, 1):  # two splits, pooled
                n = 150 + 7 * seed
                frames.append(pd.DataFrame({"sse": rng.lognormal(1.0, 1.2, n), "nlpd": 2 + rng.gamma(1.5, 0.4, n),
                                            "variant": variant, "sf": sf, "seed": seed}))
    points = pd.concat(frames, ignore_index=True)
    table = pooled_stats(points)
    assert len(table) == 4 and list(table.sf) == [1.0, 0.1, 1.0, 0.1]
    for row in table.itertuples():
        sel = points[(points.variant == row.variant) & (points.sf == row.sf)]
        assert row.points == len(sel) == 307
        for m in ("sse", "nlpd"):
            ref = cbook.boxplot_stats(sel[m].to_numpy(), whis=1.5)[0]
            assert np.isclose(getattr(row, f"{m}_median"), ref["med"], rtol=1e-12)
            assert np.isclose(getattr(row, f"{m}_q1"), ref["q1"], rtol=1e-12)
            assert np.isclose(getattr(row, f"{m}_q3"), ref["q3"], rtol=1e-12)
            assert np.isclose(getattr(row, f"{m}_upper_whisker"), ref["whishi"], rtol=1e-12)
            assert np.isclose(getattr(row, f"{m}_mean"), sel[m].mean(), rtol=1e-12)
        # the lognormal SSE has points beyond the whisker: the whisker is not the maximum
        assert row.sse_upper_whisker < sel.sse.max()
