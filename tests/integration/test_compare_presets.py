"""The compare presets (conf/experiment/compare_*.yaml) on a generated CSV, typed as a user would
(`experiment=compare_X dataset=csv dataset.path=FILE ...`), then `dlm-bench report`: the paper's method set for the
task runs, and the report holds the per-seed selected table (beta from the grid, the validation minimum among the
method's runs, re-derived here from results.parquet) and the paired table against the ELBO-trained SVGP (its
mean_diff re-derived from the selected table; p-values against scipy.stats at 3 seeds, "too few seeds" below). The
classification and count presets choose M by the DLM paper's Table 1 rule (model.num_inducing_rule=dlm_table1:
floor(N / 100) of the file's rows, at least 1), and every run.json records the integer it trained with.

Each preset runs once at its cheapest smoke size: betas n and n/8 (beta_index 0 and 3), 2 iterations,
60 training rows, 1 seed (so the paired table says "too few seeds"). CPU each, measured with time.process_time()
around the test on the 2-core dev machine (AMD EPYC, OMP_NUM_THREADS=1, load 3-4 from other jobs), in a pytest
process that had already run one compare sweep and report (torch, gpytorch, Hydra and matplotlib imported, as in a
make test worker): compare_classification (8 points, 4 runs) 11.0 s, compare_count (8 points, 4 runs) 13.5 s,
compare_regression (14 points, 9 runs) 15.8 s; 40 s in all, mostly Hydra composing each point (twice: the plan and the
launch) and the report's figures, not training. The first such test in a fresh process costs ~4 s more (imports). make test runs compare_classification (the
cheapest: 17 s wall in make test's log); compare_count and compare_regression are slow-marked (18 and 27 s there):
their methods and likelihoods run in make test through other tests (the batched and fixed paths in test_batched*.py,
sq-DLM in test_methods_end_to_end.py and test_sq_dlm.py, the count likelihood in test_glm_end_to_end.py), and every preset's composition is checked against
its table in tests/unit/config/test_method_presets.py. make test had reached 594 s on a quiet 2-core machine.
The 3-seed variant (5 iterations, p-values against scipy) is slow-marked: 23.5 s, 24.6 s and 38.7 s CPU measured the
same way."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dlm_bench.cli import main
from tests.helpers import write_regression_csv


def _labelled_csv(path, task, n=160, seed=0):
    """x0, x1 and a target: binary (0/1 by the sign of sin(2 x0) + x1 + noise) or count (Poisson, log rate
    sin(2 x0) + 0.5 x1)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    f = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    y = (f + 0.3 * rng.normal(size=n) > 0).astype(int) if task == "binary" else rng.poisson(np.exp(f))
    pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "y": y}).to_csv(path, index=False)
    return path


CASES = {  # preset -> (task, its methods as the report labels them, the default baseline)
    "compare_regression": ("regression", {"SVGP (collapsed ELBO)", "FITC", "beta-ELBO", "DLM (joint)", "DLM (fixed)",
                                          "sq-DLM (joint)", "sq-DLM (fixed)"}, "SVGP (collapsed ELBO)"),
    "compare_classification": ("binary", {"ELBO (beta=1)", "beta-ELBO", "DLM", "fixed-DLM"}, "ELBO (beta=1)"),
    "compare_count": ("count", {"ELBO (beta=1)", "beta-ELBO", "DLM", "fixed-DLM"}, "ELBO (beta=1)"),
}
# the cheapest size per preset in make test: rows of the CSV, seeds, overrides past the preset's own
SMOKE = {
    "compare_classification": (120, [0], ["protocol.train_size=60", "protocol.test_size=30"]),
    "compare_count": (120, [0], ["protocol.train_size=60", "protocol.test_size=30"]),
    # the 67/8/25 split of 90 rows trains on 60; M by hand (the preset's 100 is more than the smoke's rows)
    "compare_regression": (90, [0], ["model.num_inducing=8"]),
}


def _sweep_and_report(preset, tmp_path, n_rows, seeds, extra, iters):
    """The user's two commands on a generated CSV; returns (selected, paired, results.parquet rows)."""
    task = CASES[preset][0]
    csv = tmp_path / "mine.csv"
    write_regression_csv(csv, n=n_rows) if task == "regression" else _labelled_csv(csv, task, n=n_rows)
    assert main(["sweep", f"experiment={preset}", "dataset=csv", f"dataset.path={csv}", "dataset.target=y",
                 f"dataset.task={task}", f"results_dir={tmp_path / 'results'}", "objective.beta_index=0,3",
                 f"seed={','.join(map(str, seeds))}", f"trainer.max_iters={iters}", "launcher=local", *extra]) == 0
    rep = tmp_path / "rep"
    assert main(["report", str(tmp_path / "results" / preset), "--out", str(rep)]) == 0
    assert (rep / "index.html").is_file() and (rep / f"{preset}_paired.png").is_file()
    return (pd.read_csv(rep / f"{preset}_selected.csv"), pd.read_csv(rep / f"{preset}_paired.csv"),
            pd.read_parquet(rep / "results.parquet"))


def _key(metric, row) -> tuple:
    """A run as the selected table shows it: seed, beta and its test metric (9 digits)."""
    return int(row["seed"]), float(row["beta"]), round(float(row[metric]), 9)


def _grid_minima(runs: pd.DataFrame, metric: str) -> set:
    """_key of the validation minimum of each run method's beta-grid runs (ties: the larger beta), from the runs
    themselves: sq-DLM on val_mse, the rest on val_nll (the paper's rule)."""
    grid = runs[(runs["status"] == "ok") & runs["cfg.objective.beta_index"].notna()]
    out = set()
    for _, g in grid.groupby(["method", "objective", "seed"]):
        val = "val_mse" if (g["objective"] == "sq_dlm").all() else "val_nll"
        out.add(_key(metric, g.sort_values([val, "beta"], ascending=[True, False]).iloc[0]))
    return out


def _recorded_m(root) -> set:
    out = set()
    for f in root.glob("*/run.json"):
        model = json.loads(f.read_text())["config"]["model"]
        out.add((model["num_inducing"], model.get("num_inducing_rule")))
    return out


def _check_report(preset, tmp_path, sel, pairs, runs, seeds):
    task, methods, baseline = CASES[preset]
    assert set(sel["method"]) == methods and set(sel["seed"]) == set(seeds)
    n = int(sel["train_size"].iloc[0])
    assert n == 60 and set(sel["train_size"]) == {n}
    chosen = sel[sel["selected_by"].notna()]
    assert set(chosen["beta_selected"]) <= {float(n), n / 8}  # beta_index 0 and 3: n and n / 2^3
    metric = "test_mse" if task == "regression" else "test_nll"  # sq-DLM has no NLL
    assert {_key(metric, r) for _, r in chosen.rename(columns={"beta_selected": "beta"}).iterrows()} \
        == _grid_minima(runs, metric)
    assert set(sel.loc[sel["method"] == baseline, "selected_by"].isna()) == {True}
    # paired: every other method against the baseline, mean_diff = mean over seeds of the selected rows' difference
    assert set(pairs["baseline"]) == {baseline} and set(pairs["method"]) == methods - {baseline}
    assert (pairs["n_seeds"] == len(seeds)).all()
    base = sel[sel["method"] == baseline].set_index("seed")
    assert {"test_nll", metric} <= set(pairs["metric"])
    for r in pairs.itertuples():
        d = (sel[sel["method"] == r.method].set_index("seed")[r.metric] - base[r.metric]).dropna()
        assert len(d) == r.n_seeds and r.wins == int((d < 0).sum())
        assert r.mean_diff == pytest.approx(d.mean(), rel=1e-9, abs=1e-12)
        if len(seeds) < 3:
            assert r.p_value == "too few seeds"
        elif (d == 0).all():  # nothing to test: test_error on 30 rows often coincides after 5 iterations
            assert r.p_value == "all differences zero", (r.method, r.metric)
        else:  # scipy on the selected rows: the paired t-test of method vs baseline, Wilcoxon of the differences
            ours = sel[sel["method"] == r.method].set_index("seed")[r.metric]
            ref = stats.ttest_rel(ours[d.index], base.loc[d.index, r.metric]) if r.test == "paired t" else stats.wilcoxon(d.to_numpy())
            assert float(r.p_value) == pytest.approx(ref.pvalue, rel=1e-9)
    if task == "regression":
        assert _recorded_m(tmp_path / "results" / preset) == {(8, None)}
    else:  # floor(rows / 100) = 1 inducing point by the Table 1 rule, recorded in every run.json
        assert _recorded_m(tmp_path / "results" / preset) == {(1, "dlm_table1")}


@pytest.mark.parametrize("preset", [p if p == "compare_classification" else pytest.param(p, marks=pytest.mark.slow)
                                    for p in sorted(CASES)])
def test_compare_preset_at_smoke_size_runs_on_a_csv_and_reports(preset, tmp_path):
    """Each preset once, as cheap as it goes (module docstring: 11-16 s CPU each): 1 seed, so the paired
    table says "too few seeds" rather than a p-value."""
    n_rows, seeds, extra = SMOKE[preset]
    sel, pairs, runs = _sweep_and_report(preset, tmp_path, n_rows, seeds, extra, iters=2)
    _check_report(preset, tmp_path, sel, pairs, runs, seeds)


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(CASES))
def test_compare_preset_at_three_seeds_gives_p_values(preset, tmp_path):
    """3 seeds, 5 iterations: the paired table's p-values are scipy's paired t and Wilcoxon on the selected rows."""
    n_rows, _, extra = SMOKE[preset]
    sel, pairs, runs = _sweep_and_report(preset, tmp_path, n_rows, [0, 1, 2], extra, iters=5)
    _check_report(preset, tmp_path, sel, pairs, runs, [0, 1, 2])
