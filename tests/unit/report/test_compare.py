"""Per-seed beta selection and paired comparisons: against scipy.stats (the independent reference), a numpy
re-derivation of t and its standard error, a case whose sign is known, and the report files they go to."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dlm_bench.report import build_report, collect
from dlm_bench.report.compare import (TOO_FEW, paired, paired_test, pick_baseline, selected_rows, selection_methods,
                                      with_grid_flag)
from dlm_bench.report.html import markdown_to_html

# test NLL per seed: DLM is lower than the ELBO on 4 of 5 seeds; the differences are
# [-0.3, -0.1, -0.4, 0.05, -0.2] (mean -0.19)
ELBO = [1.00, 1.10, 0.90, 1.20, 1.05]
DLM_AT_BEST = [0.70, 1.00, 0.50, 1.25, 0.85]
GRID = {0: 442.0, 1: 221.0, 2: 110.5}  # beta_index -> beta = n / 2^k


def _write(root, name, rec):
    d = root / name
    d.mkdir(parents=True)
    (d / "run.json").write_text(json.dumps(rec))


def _record(method, objective, beta, seed, test_nll, val_nll, beta_index=None, experiment="mine"):
    return {"schema": 1, "status": "ok", "error": None, "paper": None, "experiment": experiment, "dataset": "csv",
            "task": "regression", "model": "svgp", "objective": objective, "estimator": "exact",
            "likelihood": "gaussian", "beta": beta, "seed": seed, "split": "dlm_regression", "train_size": 442,
            "num_inducing": 50, "hyperparameters": "joint", "method": method,
            "metrics": {"test_nll": test_nll, "val_nll": val_nll, "test_mse": test_nll / 2},
            "train": {"iterations": 10}, "config": {"objective": {"beta_index": beta_index}}, "env": {"git": "abc"}}


def write_sweep(root, seeds=range(5)):
    """An ad-hoc sweep: ELBO at beta=1 (off the grid) and DLM on a 3-point grid, where validation prefers
    beta_index 1 (beta 221) on every seed; there DLM's test NLL is DLM_AT_BEST, elsewhere 0.5 worse."""
    for s in seeds:
        _write(root, f"elbo_{s}", _record("svgp-elbo", "elbo", 1.0, s, ELBO[s], ELBO[s]))
        for k, beta in GRID.items():
            best = k == 1
            _write(root, f"dlm_{k}_{s}", _record("svgp-dlm", "dlm", beta, s, DLM_AT_BEST[s] + (0 if best else 0.5),
                                                 0.1 if best else 0.2 + k, beta_index=k))


def test_paired_statistics_match_scipy_and_a_numpy_rederivation():
    d = np.array(DLM_AT_BEST) - np.array(ELBO)
    sel = pd.DataFrame({"dataset": "csv", "train_size": 442, "seed": list(range(5)) * 2,
                        "method": ["ELBO"] * 5 + ["DLM"] * 5, "test_nll": ELBO + DLM_AT_BEST})
    out = paired(sel, "ELBO").set_index("test")
    t_row, w_row = out.loc["paired t"], out.loc["Wilcoxon signed-rank"]
    se = math.sqrt(sum((x - d.mean()) ** 2 for x in d) / 4) / math.sqrt(5)  # by hand: sample sd / sqrt(n)
    assert t_row["mean_diff"] == pytest.approx(-0.19) and t_row["se"] == pytest.approx(se)
    t = -0.19 / se
    assert t_row["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), df=4))  # two-sided p of t with n - 1 d.o.f.
    assert t_row["p_value"] == pytest.approx(stats.ttest_rel(DLM_AT_BEST, ELBO).pvalue)
    assert w_row["p_value"] == pytest.approx(stats.wilcoxon(DLM_AT_BEST, ELBO).pvalue)
    # exact Wilcoxon by hand: |d| ranks 4, 2, 5, 1, 3; the one positive difference has rank 1, so W = min(1, 14)
    # = 1; of the 2^5 sign patterns, those with W <= 1 are 4 (W+ in {0, 1} or W- in {0, 1}): p = 4/32
    assert w_row["p_value"] == pytest.approx(4 / 32)
    assert t_row["wins"] == 4 and t_row["n_seeds"] == 5
    assert t_row["ci95"] == pytest.approx(stats.t.ppf(0.975, 4) * se)


def test_a_method_worse_on_every_seed_has_a_positive_difference_and_no_wins():
    base = np.array([1.0, 2.0, 3.0, 4.0])
    sel = pd.DataFrame({"dataset": "d", "train_size": 10, "seed": [0, 1, 2, 3] * 2, "method": ["B"] * 4 + ["M"] * 4,
                        "test_nll": np.r_[base, base + [0.5, 0.7, 0.6, 0.9]]})
    row = paired(sel, "B").iloc[0]
    assert row["mean_diff"] == pytest.approx(0.675) and row["wins"] == 0
    assert row["p_value"] < 0.01


def test_below_three_seeds_the_table_says_too_few_seeds():
    assert [r["p_value"] for r in paired_test(np.array([0.1, -0.3]))] == [TOO_FEW, TOO_FEW]


def test_only_seeds_both_methods_have_are_paired():
    sel = pd.DataFrame({"dataset": "d", "train_size": 10, "seed": [0, 1, 2, 3, 1, 2, 3, 4],
                        "method": ["B"] * 4 + ["M"] * 4, "test_nll": [1, 2, 3, 4, 2.5, 3.6, 4.4, 9.0]})
    row = paired(sel, "B").iloc[0]
    assert row["n_seeds"] == 3 and row["mean_diff"] == pytest.approx(0.5)


def test_paired_cells_by_other_columns_match_scipy():
    """`by` other than (dataset, train_size): each cell paired on its own, the cell's columns first in the table."""
    rng = np.random.default_rng(0)
    base, other = rng.normal(2.0, 0.1, size=(2, 4)), rng.normal(2.05, 0.1, size=(2, 4))
    sel = pd.DataFrame([{"dataset": "d", "train_iterations": it, "seed": s, "method": m, "test_nll": v[i, s]}
                        for i, it in enumerate((100, 3000)) for m, v in (("Q", base), ("B", other)) for s in range(4)])
    out = paired(sel, "Q", by=("dataset", "train_iterations"), metrics=("test_nll",))
    assert list(out.columns[:4]) == ["dataset", "train_iterations", "method", "baseline"]
    for i, it in enumerate((100, 3000)):
        row = out[(out["train_iterations"] == it) & (out["test"] == "paired t")].iloc[0]
        assert row["mean_diff"] == pytest.approx((other[i] - base[i]).mean())
        assert row["p_value"] == pytest.approx(stats.ttest_rel(other[i], base[i]).pvalue)


def test_a_paired_layout_pairs_a_learning_curves_estimators_seed_by_seed(tmp_path):
    """The `paired` layout kind (dlm_samplers_count: each estimator against exact gradients at every iteration
    budget): its table against scipy on the runs written, its figure drawn."""
    nll = {("quadrature", None): [2.25, 2.26, 2.24], ("bmc", 1): [2.26, 2.275, 2.245]}
    for (est, L), values in nll.items():
        for s, v in enumerate(values):
            for it, shift in ((100, 0.3), (3000, 0.0)):
                rec = _record("svgp-dlm", "dlm", 1.0, s, v + shift, v, experiment="dlm_samplers_count")
                rec.update(estimator=est, dataset="abalone", train={"iterations": it})
                rec["config"] = {"estimator": {"name": est, "num_samples": L}}
                rec["metrics"]["test_mre"] = 0.5
                _write(tmp_path / "runs", f"{est}_{it}_{s}", rec)
    build_report([tmp_path / "runs"], tmp_path / "rep")
    pairs = pd.read_csv(tmp_path / "rep" / "dlm_samplers_count_paired_by_iterations.csv")
    row = pairs[(pairs["train_iterations"] == 3000) & (pairs["metric"] == "test_nll") & (pairs["test"] == "paired t")]
    assert list(row["method"]) == ["bMC-1"] and list(row["baseline"]) == ["quadrature (exact gradients)"]
    want = stats.ttest_rel(nll[("bmc", 1)], nll[("quadrature", None)])
    assert float(row["p_value"].iloc[0]) == pytest.approx(want.pvalue) and row["wins"].iloc[0] == 0
    assert (tmp_path / "rep" / "dlm_samplers_count_paired_by_iterations.png").is_file()


def test_ad_hoc_sweep_selects_each_seeds_beta_on_validation(tmp_path):
    write_sweep(tmp_path)
    df = with_grid_flag(collect([tmp_path]))
    methods = selection_methods(df, ())
    assert [m.label for m in methods] == ["svgp-dlm (beta selected)", "svgp-elbo (beta=1)"]
    sel = selected_rows(df, methods)
    dlm = sel[sel["method"] == "svgp-dlm (beta selected)"].sort_values("seed")
    assert list(dlm["beta_selected"]) == [221.0] * 5 and list(dlm["test_nll"]) == pytest.approx(DLM_AT_BEST)
    assert pick_baseline(sel["method"], None) == "svgp-elbo (beta=1)"
    assert pick_baseline(sel["method"], "nope") is None


def test_report_writes_selected_paired_and_html(tmp_path):
    write_sweep(tmp_path / "runs")
    made = build_report([tmp_path / "runs"], tmp_path / "rep")
    out = tmp_path / "rep"
    sel = pd.read_csv(out / "mine_selected.csv")
    assert len(sel) == 10 and {"beta_selected", "selected_by"} <= set(sel.columns)
    pairs = pd.read_csv(out / "mine_paired.csv")
    assert list(pairs.columns[:6]) == ["dataset", "train_size", "method", "baseline", "metric", "test"]
    nll = pairs[(pairs["metric"] == "test_nll") & (pairs["test"] == "paired t")].iloc[0]
    assert nll["baseline"] == "svgp-elbo (beta=1)" and nll["mean_diff"] == pytest.approx(-0.19)
    assert float(nll["p_value"]) == pytest.approx(stats.ttest_rel(DLM_AT_BEST, ELBO).pvalue)
    summary = pd.read_csv(out / "mine_summary.csv")  # the selected rows beside the per-beta ones, labelled so
    picked = summary[(summary["series"] == "svgp-dlm (beta selected)") & (summary["metric"] == "test_nll")]
    assert picked["beta"].isna().all() and picked["mean"].iloc[0] == pytest.approx(np.mean(DLM_AT_BEST))
    assert (out / "mine_paired.png").is_file() and made["html"] == out / "index.html"
    page = (out / "index.html").read_text()
    assert page.index("mine_selected") < page.index("mine_paired") < page.index("mine_summary")
    assert "data:image/png;base64," in page and "http://" not in page and "https://" not in page


def test_a_baseline_that_names_no_method_is_a_one_line_error_after_the_report(tmp_path):
    from dlm_bench.report.collect import ReportError

    write_sweep(tmp_path / "runs", seeds=range(3))
    with pytest.raises(ReportError, match="report.baseline='ELBO!' names no method"):
        build_report([tmp_path / "runs"], tmp_path / "rep", baseline="ELBO!")
    assert (tmp_path / "rep" / "mine_selected.csv").is_file()
    build_report([tmp_path / "runs"], tmp_path / "rep2", baseline="svgp-dlm (beta selected)")
    pairs = pd.read_csv(tmp_path / "rep2" / "mine_paired.csv")
    assert set(pairs["method"]) == {"svgp-elbo (beta=1)"} and (pairs["mean_diff"][pairs.metric == "test_nll"] > 0).all()


def test_several_baselines_give_one_paired_table_each_from_the_command_line(tmp_path):
    """`dlm-bench report DIR --baseline A report.baseline=B`: A's table is <exp>_paired, B's <exp>_paired_vs_<slug>;
    a further label that names no method is the one-line error, after both tables are written."""
    from dlm_bench.cli import main

    write_sweep(tmp_path / "runs", seeds=range(3))
    assert main(["report", str(tmp_path / "runs"), "--baseline", "svgp-elbo (beta=1)",
                 "report.baseline=svgp-dlm (beta selected)", "--out", str(tmp_path / "rep")]) == 0
    first = pd.read_csv(tmp_path / "rep" / "mine_paired.csv")
    second = pd.read_csv(tmp_path / "rep" / "mine_paired_vs_svgp_dlm_beta_selected.csv")
    assert set(first["baseline"]) == {"svgp-elbo (beta=1)"} and set(second["baseline"]) == {"svgp-dlm (beta selected)"}
    nll = [t[(t["metric"] == "test_nll") & (t["test"] == "paired t")]["mean_diff"].iloc[0] for t in (first, second)]
    assert nll[0] == pytest.approx(-nll[1])  # the same pair, seen from either side
    assert main(["report", str(tmp_path / "runs"), "--baseline", "svgp-elbo (beta=1)", "--baseline", "nope",
                 "--out", str(tmp_path / "rep3")]) == 2
    assert (tmp_path / "rep3" / "mine_paired.csv").is_file()


def test_markdown_tables_become_html_tables_with_text_escaped():
    page = markdown_to_html("# t\n\n| a | b |\n|---|---|\n| 1 | <x> |\n\n- [f](f.md)")
    assert "<table>" in page and "<td>&lt;x&gt;</td>" in page and '<a href="f.md">f</a>' in page
