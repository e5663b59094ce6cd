"""Report: tables against hand-computed mean / standard error, selection, figure structure."""

import json

import numpy as np
import pandas as pd
import pytest

from dlm_bench.report import FigureSpec, MethodSpec, build_report, collect
from dlm_bench.report.figures import make_figure
from dlm_bench.report.layouts import where
from dlm_bench.report.tables import apply_methods, mean_se

BETAS = (0.1, 1.0, 10.0)
SEEDS = (0, 1, 2)


def write_runs(root, experiment="synthetic", skip=()):
    """Synthetic run.json files: test_nll = f(objective, beta, seed) known in closed form."""
    values = {}
    for objective in ("elbo", "dlm"):
        for beta in BETAS:
            for seed in SEEDS:
                if (objective, beta, seed) in skip:
                    continue
                test_nll = (1.0 if objective == "elbo" else 0.5) + np.log10(beta) ** 2 + 0.1 * seed
                val_nll = test_nll - (2.0 if beta == 10.0 else 0.0)  # validation prefers beta=10, test beta=1
                values[(objective, beta, seed)] = (test_nll, val_nll)
                rec = {
                    "schema": 1, "status": "ok", "error": None, "paper": "dlm", "experiment": experiment,
                    "dataset": "boston", "task": "regression", "model": "svgp", "objective": objective,
                    "estimator": "exact", "likelihood": "gaussian", "beta": beta, "seed": seed,
                    "split": "dlm_regression", "train_size": 339, "num_inducing": 50, "hyperparameters": "joint",
                    "metrics": {"test_nll": test_nll, "val_nll": val_nll, "test_mse": 0.1 * seed},
                    "train": {"iterations": 10}, "config": {}, "env": {"git": "abc"},
                }
                d = root / experiment / f"{objective}_{beta}_{seed}"
                d.mkdir(parents=True)
                (d / "run.json").write_text(json.dumps(rec))
    return values


def test_table_cell_is_mean_and_standard_error_by_hand(tmp_path):
    values = write_runs(tmp_path)
    df = collect([tmp_path])
    assert len(df) == 18 and set(df["method"]) == {"svgp-elbo", "svgp-dlm"}
    tidy = mean_se(apply_methods(df, ()), ["dataset", "beta", "series"], ("test_nll",))
    cell = tidy[(tidy.beta == 10.0) & (tidy.series == "svgp-dlm")].iloc[0]
    v = np.array([values[("dlm", 10.0, s)][0] for s in SEEDS])
    assert cell["mean"] == pytest.approx(v.sum() / 3)
    assert cell["se"] == pytest.approx(np.sqrt(((v - v.mean()) ** 2).sum() / 2) / np.sqrt(3))
    assert cell["n"] == 3


def test_beta_selection_in_a_method_uses_the_validation_minimum(tmp_path):
    write_runs(tmp_path)
    df = collect([tmp_path])
    sel = apply_methods(df, (MethodSpec("DLM", where(objective="dlm"), select_by="val_nll"),))
    # by construction val_nll is lowest at beta=10 for every seed (test_nll would pick beta=1)
    assert list(sel.sort_values("seed")["beta"]) == [10.0, 10.0, 10.0]
    assert set(sel["series"]) == {"DLM"}


def test_figure_has_one_line_per_method_and_one_point_per_x(tmp_path):
    write_runs(tmp_path, skip={("elbo", 10.0, 0), ("elbo", 10.0, 1), ("elbo", 10.0, 2)})
    df = collect([tmp_path])
    fig = make_figure(df, FigureSpec("f", x="beta", metrics=("test_nll", "test_mse"), xscale="log"))
    axes = fig.axes
    assert len(axes) == 2
    for ax in axes:
        # ax.errorbar returns an ErrorbarContainer: its label is the method, lines[0] the data line
        lines = {c.get_label(): c.lines[0] for c in ax.containers}
        assert set(lines) == {"svgp-elbo", "svgp-dlm"}
        assert len(lines["svgp-dlm"].get_xdata()) == 3
        assert len(lines["svgp-elbo"].get_xdata()) == 2  # beta=10 missing for elbo
    dlm = {c.get_label(): c.lines[0] for c in axes[0].containers}["svgp-dlm"]
    assert list(dlm.get_xdata()) == [0.1, 1.0, 10.0]


def test_build_report_writes_everything_and_lists_missing_points(tmp_path):
    write_runs(tmp_path / "res", experiment="dlm_demo", skip={("dlm", 1.0, 2)})
    made = build_report([tmp_path / "res"], tmp_path / "out")
    names = {p.name for p in made["tables"] + made["figures"]}
    assert {"dlm_demo_test_vs_beta.png", "dlm_demo_test_vs_beta.pdf", "dlm_demo_by_beta.csv",
            "dlm_demo_by_beta.md", "dlm_demo_selected_beta.md"} <= names
    df = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert len(df) == 17
    index = (tmp_path / "out" / "index.md").read_text()
    assert "'method': 'svgp-dlm', 'beta': 1.0" in index and "2 of 3 seeds" in index


def test_figure_that_matches_no_run_is_not_drawn_and_the_index_says_so(tmp_path, monkeypatch):
    from dlm_bench.report import layouts as specs

    write_runs(tmp_path / "res", experiment="dlm_demo")
    panel = specs.fig1_panel("fig1d_ringnorm", "ringnorm", "exact")  # no ringnorm run among them
    monkeypatch.setitem(specs.SPECS, "dlm_demo", specs.SPECS["dlm_demo"] + (panel,))
    out = tmp_path / "out"
    out.mkdir()
    (out / "dlm_demo_fig1d_ringnorm.png").write_bytes(b"stale")  # left by an earlier report
    made = build_report([tmp_path / "res"], out)
    assert not (out / "dlm_demo_fig1d_ringnorm.png").exists()
    assert "dlm_demo_test_vs_beta.png" in {p.name for p in made["figures"]}
    assert made["not_drawn"] == ["dlm_demo_fig1d_ringnorm: no runs match its methods"]
    assert "- dlm_demo_fig1d_ringnorm: no runs match its methods" in (out / "index.md").read_text()


def test_curve_figure_averages_tracked_metrics_over_seeds(tmp_path):
    from dlm_bench.report.figures import make_curve_figure
    from dlm_bench.report.layouts import CurveSpec

    write_runs(tmp_path)
    df = collect([tmp_path])
    expected = {}
    for run_dir, seed, objective in zip(df.run_dir, df.seed, df.objective):
        curve = pd.DataFrame({"iteration": [1, 10, 20], "loss": [3.0, 2.0, 1.0],
                              "test_nll": [2.0 + seed, 1.0 + seed, np.nan]})
        curve.to_csv(f"{run_dir}/curve.csv", index=False)
    fig = make_curve_figure(df[df.beta == 1.0], CurveSpec("c", metric="test_nll"))
    (ax,) = fig.axes
    lines = {l.get_label(): l for l in ax.get_lines()}
    assert set(lines) == {"svgp-elbo", "svgp-dlm"}
    line = lines["svgp-dlm"]
    assert list(line.get_xdata()) == [1, 10]  # NaN (untracked) rows are dropped
    assert list(line.get_ydata()) == pytest.approx([2.0 + 1.0, 1.0 + 1.0])  # mean over seeds 0, 1, 2


def test_curve_panel_without_curve_files_says_so(tmp_path):
    """A dataset whose runs have no curve.csv (restored from a runs.tgz) gets a panel that says why it is empty."""
    from dlm_bench.report.figures import make_curve_figure
    from dlm_bench.report.layouts import CurveSpec

    write_runs(tmp_path)
    df = collect([tmp_path])
    for run_dir in df.run_dir:
        pd.DataFrame({"iteration": [1, 10], "test_nll": [2.0, 1.0]}).to_csv(f"{run_dir}/curve.csv", index=False)
    other = df.assign(dataset="restored", run_dir=[str(tmp_path / f"gone{i}") for i in range(len(df))])
    fig = make_curve_figure(pd.concat([df, other])[lambda d: d.beta == 1.0], CurveSpec("c", metric="test_nll"))
    panels = {ax.get_title(): ax for ax in fig.axes}
    restored, (kept,) = panels.pop("restored"), panels.values()
    assert not restored.get_lines()
    assert [t.get_text() for t in restored.texts] == ["no test_nll curve:\nits runs have no curve.csv"]
    assert len(kept.get_lines()) == 2 and not kept.texts


def test_collect_flattens_config_for_filtering(tmp_path):
    write_runs(tmp_path)
    d = next(tmp_path.glob("synthetic/*/"))
    rec = json.loads((d / "run.json").read_text())
    rec["config"] = {"estimator": {"name": "bmc", "num_samples": 10}, "launcher": {"setup": ["x"]}}
    (d / "run.json").write_text(json.dumps(rec))
    df = collect([tmp_path])
    assert df["cfg.estimator.num_samples"].dropna().tolist() == [10]
    assert not any(c.startswith("cfg.launcher") for c in df.columns)
