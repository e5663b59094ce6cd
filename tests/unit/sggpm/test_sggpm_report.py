"""sggpm report: Fig. 2 panels, CPU time vs set size and the Fig. 3 time / accuracy curves from run.json files."""

import json

import matplotlib.image as mpimg

from dlm_bench.sggpm.report import build, collect


def write_run(d, ds, method, M, cpu, err):
    p = d / f"{ds}_{method}_{M}" / "run.json"
    p.parent.mkdir(parents=True)
    key = "mfe" if ds == "ucsdpeds1l" else "mze"
    p.write_text(json.dumps({"status": "ok", "model": "sggpm", "dataset": ds, "objective": method, "metrics": {
        key: err, f"{key}_se": 0.01, "mnlpd": 1.0 + err, "mnlpd_se": 0.02, "cpu_s": cpu, "set_size": M,
        "folds": 10, "neg_vlb": 1.0}}))
    return p


def test_time_figures(tmp_path):
    paths = [write_run(tmp_path / "runs", ds, m, M, 0.01 * M * (1 + i), 0.2 / M)
             for ds in ("ucsdpeds1l", "stock") for i, m in enumerate(("fp_sparse", "grad_sod"))
             for M in (10, 20, 40)]
    paths.append(write_run(tmp_path / "runs", "stock", "dual_sparse", 10, 0.1, 0.1))
    rows = collect(paths)
    assert len(rows) == 13 and {r["err_name"] for r in rows} == {"mfe", "mze"}
    out = tmp_path / "report"
    files = {p.name for p in build(paths, out, name="t")}
    for ds in ("ucsdpeds1l", "stock"):
        assert {f"{ds}.png", f"{ds}_cpu_time.png", f"{ds}_fig3.png"} <= files
        assert mpimg.imread(out / f"{ds}_fig3.png").shape[2] in (3, 4)
    md = (out / "tables.md").read_text()
    assert "## stock: CPU s" in md and "| FP-sparse | 0.1 | 0.2 | 0.4 |" in md
