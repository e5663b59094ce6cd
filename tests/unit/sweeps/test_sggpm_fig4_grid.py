"""sggpm_fig4 / sggpm_fig4_smoke (Sheth, Wang & Khardon 2015, Fig. 4): every grid point composes and passes the
runner's checks (validate, check_combination, sggpm's own pre-training checks with the dataset's registered size);
compose only, nothing is loaded or trained."""

from __future__ import annotations

import itertools

import pytest

from dlm_bench.data.datasets import get_spec
from dlm_bench.errors import NotApplicable
from dlm_bench.registry.combination_rules import check_combination
from dlm_bench.registry.validation import validate
from dlm_bench.report.layouts import SPECS
from dlm_bench.run import run_name
from dlm_bench.papers.sggpm import METHODS
from dlm_bench.sggpm.plugin import check_point
from dlm_bench.sweeps.compose import compose_config
from tests.helpers import sweeper_params


def grid(experiment):
    params = sweeper_params(experiment)
    keys = list(params)
    axes = [[f"{k}={v}" for v in str(params[k]).split(",")] for k in keys]
    return [[f"experiment={experiment}", *p] for p in itertools.product(*axes)]


def test_every_fig4_smoke_point_composes_and_passes_the_checks():
    experiment = "sggpm_fig4_smoke"
    points = grid(experiment)
    assert len(points) == 2 * 7 * 3
    names, not_applicable, methods = set(), [], set()
    for point in points:
        cfg = compose_config(point)
        validate(cfg, point[1:])
        check_combination(cfg)
        assert cfg.model.name == "sggpm" and cfg.sggpm.learn_hyperparameters is True and cfg.sggpm.max_folds == 3
        assert cfg.experiment == experiment and cfg.report in SPECS
        spec = get_spec(cfg.dataset.name)
        try:
            check_point(cfg.sggpm, spec.name, spec.task, spec.shape[0])
        except NotApplicable:
            not_applicable.append((cfg.dataset.name, cfg.sggpm.method))
        names.add(run_name(cfg))
        methods.add(cfg.sggpm.method)
    assert len(names) == len(points)  # no two points share a run directory
    assert methods == set(METHODS)  # all 7 methods learn hyperparameters (hyp.py)
    # only dual on ordinal data is refused, and that at run time as "not applicable" (as in Fig. 2)
    assert sorted(not_applicable) == [("stock", m) for m in ("dual_sod", "dual_sod", "dual_sod", "dual_sparse",
                                                             "dual_sparse", "dual_sparse")]


def test_fig4_full_grid():
    """The full grid: Fig. 4's three datasets, Fig. 2's methods and sizes (every point of it composes in
    tests/unit/config/test_method_presets.py); one point per dataset through the checks here."""
    params = sweeper_params("sggpm_fig4")
    assert params == dict(sweeper_params("sggpm_fig2"), dataset="ucsdpeds1l,usps35,stock")
    for ds in ("ucsdpeds1l", "usps35", "stock"):
        point = ["experiment=sggpm_fig4", f"dataset={ds}", "sggpm.method=fp_sparse", "sggpm.size_index=4"]
        cfg = compose_config(point)
        validate(cfg, point[1:])
        check_combination(cfg)
        spec = get_spec(ds)
        check_point(cfg.sggpm, spec.name, spec.task, spec.shape[0])
        assert cfg.sggpm.learn_hyperparameters is True and cfg.sggpm.max_folds is None and cfg.report == "sggpm_fig4"
