"""Report layouts as data (report/layout_files.py): a layout file read back into exactly the dataclasses it
describes, every mistake in one a one-line error naming the file, and every experiment's `report:` key found
among the papers' layout files."""

from __future__ import annotations

import pytest

from dlm_bench.config.papers import Dotted
from dlm_bench.report.layout_files import LayoutError, all_layouts, load_layouts
from dlm_bench.report.paper_values import table
from dlm_bench.report.spec_types import CurveSpec, ExternalSpec, FigureSpec, MethodSpec, PredictiveSpec, TableSpec

FIXTURE = """\
reports:
  toy_fig:
  - figure:
      name: nll_vs_beta
      x: beta
      metrics: [test_nll, test_mse]
      methods: &two
      - {label: ELBO, where: {objective: elbo, beta: 1.0, ard: true, num_samples: 10}}
      - {label: DLM, where: {objective: dlm}, select_by: val_nll}
      xscale: log
  - curve: {name: curves, metric: objective, x: cpu_s, methods: *two, yscale: log}
  - table: {name: t1, by: [dataset, epsilon], metrics: [bound], methods: *two, reference: pac_table1,
            over: [cfg.model.noise_init]}
  - predictive: {name: p, method: {label: A, where: {model: pac_sgp}}, overlay: {label: B, where: {model: exact_gp}}}
  - external: {name: own, build: 'dlm_bench.sggpm.report:build'}
"""


def test_layout_file_reads_back_into_the_dataclasses_it_describes(tmp_path):
    path = tmp_path / "toy.yaml"
    path.write_text(FIXTURE)
    two = (MethodSpec("ELBO", (("objective", "elbo"), ("beta", 1.0), ("ard", True), ("num_samples", 10))),
           MethodSpec("DLM", (("objective", "dlm"),), select_by="val_nll"))
    expected = (
        FigureSpec("nll_vs_beta", x="beta", metrics=("test_nll", "test_mse"), methods=two, xscale="log"),
        CurveSpec("curves", metric="objective", x="cpu_s", methods=two, yscale="log"),
        TableSpec("t1", by=("dataset", "epsilon"), metrics=("bound",), methods=two, over=("cfg.model.noise_init",)),
        PredictiveSpec("p", method=MethodSpec("A", (("model", "pac_sgp"),)),
                       overlay=MethodSpec("B", (("model", "exact_gp"),))),
        ExternalSpec("own", Dotted("dlm_bench.sggpm.report:build")),
    )
    got = load_layouts(path)
    assert list(got) == ["toy_fig"] and got["toy_fig"] == expected
    # value types as written (1.0 a float, true a bool, 10 an int), `where` in file order, the reference resolved
    where = got["toy_fig"][0].methods[0].where
    assert [type(v) for _, v in where] == [str, float, bool, int]
    assert got["toy_fig"][2].reference == table("pac_table1") and len(got["toy_fig"][2].reference) > 0


@pytest.mark.parametrize("bad, message", [
    ("reports:\n  k:\n  - figure: {name: a, x: beta, metrics: [m], colour: red}\n",
     r"toy.yaml: reports.k\[0\].figure: unknown field 'colour'; FigureSpec fields: name, x, metrics"),
    ("reports:\n  k:\n  - histogram: {name: a}\n", r"toy.yaml: reports.k\[0\]: unknown kind 'histogram'"),
    ("reports:\n  k:\n  - table: {name: a, metrics: [m]}\n", r"toy.yaml: reports.k\[0\].table: missing field 'by'"),
    ("reports:\n  k:\n  - table: {name: a, by: [d], metrics: [m], reference: nope}\n",
     r"reference: no published table 'nope'"),
    ("reports:\n  k:\n  - table: {name: a, by: [d], metrics: [m], methods: [{label: x, wher: {}}]}\n",
     r"methods\[0\]: unknown field 'wher'; MethodSpec fields: label, where, select_by"),
    ("reports:\n  k:\n  - figure: {name: a, x: beta, metrics: test_nll}\n", r"metrics: expected a list"),
    ("layouts:\n  k: []\n", r"toy.yaml: expected one top-level mapping `reports:`"),
    ("reports: [\n", r"toy.yaml: not YAML"),
])
def test_a_mistake_in_a_layout_file_is_one_line_naming_the_file(tmp_path, bad, message):
    path = tmp_path / "toy.yaml"
    path.write_text(bad)
    with pytest.raises(LayoutError, match=message) as info:
        load_layouts(path)
    assert "\n" not in str(info.value)


def test_external_layout_imports_its_build_only_when_called(tmp_path):
    """The dotted name reaches the paper's own report function with the report's arguments."""
    import sys

    mod = tmp_path / "toy_report_mod.py"
    mod.write_text("def build(paths, out, name):\n    return [out, name, list(paths)]\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert "toy_report_mod" not in sys.modules
        assert Dotted("toy_report_mod:build")(["a/run.json"], "stem", "exp") == ["stem", "exp", ["a/run.json"]]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("toy_report_mod", None)


def test_every_report_key_is_declared_once_and_every_layout_has_a_kind():
    layouts = all_layouts()
    assert len(layouts) == 38  # 35 paper figures/tables + the 3 compare presets
    assert all(specs and all(isinstance(s, (FigureSpec, CurveSpec, TableSpec, PredictiveSpec, ExternalSpec))
                             or type(s).__name__ in ("PredictiveComparisonSpec", "PairedSpec") for s in specs)
               for specs in layouts.values())
