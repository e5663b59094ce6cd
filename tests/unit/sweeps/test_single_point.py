"""`dlm-bench run experiment=X` runs the first point of X's grid for the swept keys the command line leaves unnamed
(dlm_bench/sweeps/single_point.py). Reference: Hydra's own expansion of the grid (its BasicSweeper over the composed
hydra.sweeper.params, as `dlm-bench sweep` plans it)."""

import pytest
from omegaconf import open_dict

from dlm_bench.cli import main
from dlm_bench.config.schema import group_options
from dlm_bench.run import validate_point
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.sweeps.plan import SKIPPED, plan_sweep
from dlm_bench.sweeps.single_point import experiment_point, named_keys

EXPERIMENTS = group_options("experiment")


@pytest.mark.slow  # 57-88 s of CPU (make test-slow); kept out of make test's 10 minutes
def test_every_experiment_runs_a_valid_point_of_its_grid(tmp_path):
    # Before: the swept keys kept the global defaults (boston, SVGP, ELBO), a point outside the grid, and the eight
    # PAC experiments' single runs were refused (the PAC-Bayes evaluation does not apply to SVGP).
    assert len(EXPERIMENTS) > 40
    for experiment in EXPERIMENTS:
        overrides = [f"experiment={experiment}", f"results_dir={tmp_path}"]
        extra = experiment_point(overrides)
        cfg = compose_config(overrides + extra, hydra_config=True)
        assert named_keys(extra) == set(cfg.hydra.sweeper.get("params") or {}), experiment
        with open_dict(cfg):
            del cfg["hydra"]
        validate_point(cfg, overrides + extra)


@pytest.mark.parametrize("experiment", [pytest.param("dlm_classification_smoke", marks=pytest.mark.slow), "dlm_fig1c_smoke", "pac_table3_smoke",
                                        "fp_fig4_smoke", "sggpm_fig2_smoke", "savigp_fig1_smoke"])
def test_the_point_is_the_first_one_the_sweep_runs(experiment, tmp_path):
    # reference: the sweep's own plan of the whole grid (Hydra's BasicSweeper order, skipped points marked)
    overrides = [f"experiment={experiment}", f"results_dir={tmp_path}"]
    first = next(p for p in plan_sweep(overrides) if p.state not in SKIPPED)
    assert sorted(overrides + experiment_point(overrides)) == sorted(first.overrides)


def test_a_method_without_beta_is_passed_over_when_the_beta_indices_start_above_0(tmp_path):
    # dlm_classification_smoke sweeps method=elbo,... and objective.beta_index from 3: ELBO runs at no point of it
    overrides = ["experiment=dlm_classification_smoke", f"results_dir={tmp_path}"]
    extra = experiment_point(overrides)
    assert "method=elbo" not in extra and "objective.beta_index=3" in extra


def test_named_keys_and_their_alternatives_are_not_swept(tmp_path):
    base = ["experiment=dlm_fig1c", f"results_dir={tmp_path}"]
    assert experiment_point(base) == ["method=beta_elbo", "objective.beta_index=0", "seed=0"]
    assert experiment_point(base + ["objective.beta=2.0", "seed=3"]) == ["method=beta_elbo"]
    assert experiment_point(base + ["method=dlm", "objective.beta_index=4", "seed=1"]) == []
    assert experiment_point(["method=dlm"]) == []  # no experiment: the defaults


def test_run_says_which_point_it_takes(capsys):
    assert main(["run", "experiment=pac_table3", "method=vfe", "--cfg", "job"]) == 0
    out, err = capsys.readouterr()
    assert "experiment=pac_table3 is a grid; this run is its first point in the keys not named: seed=0 dataset=pol " \
           "(name them to choose; dlm-bench sweep experiment=pac_table3 runs every point)" in err
    assert "would write: results/pac_table3/pol_sgpr_elbo_beta1_seed0_" in out.splitlines()[-1]
    assert main(["run", "--cfg", "job"]) == 0  # no experiment named: the defaults, and no such line
    out, err = capsys.readouterr()
    assert "is a grid" not in err and "results/default/boston_svgp_elbo_beta1_seed0_" in out.splitlines()[-1]
