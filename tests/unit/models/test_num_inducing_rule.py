"""model.num_inducing_rule=dlm_table1 (dlm_bench/models/num_inducing_rules.yaml) against the DLM paper's numbers.

Wei, Sheth & Khardon, Direct Loss Minimization for Sparse Gaussian Processes (AISTATS 2021), supplement sec. 4:
"Table 1 shows the datasets used and their characteristics. In the table, "dim" refers to the number of features and
M is the number of inducing points used in our experiments." Its rows (dataset, type, size, dim, M):

    pol regression 15000 26 100        banana classification 5300 2 53      abalone count 4177 9 41
    cadata regression 20640 8 206      thyroid classification 3772 6 37     Peds1_dir0/1/2 count 4000 30 40
    sarcos regression 48933 21 100     twonorm classification 7400 20 74
    song regression 515345 90 100      ringnorm classification 7400 20 74
                                       airline classification 2055733 8 200

The classification and count rows are the rule's cases; the regression rows admit no size rule (pol has fewer rows
than cadata and sarcos more, yet both get 100 while cadata gets 206), which is why compare_regression keeps M = 100."""

from __future__ import annotations

import pandas as pd
import pytest

from dlm_bench.errors import ConfigError
from dlm_bench.models.num_inducing import m_for_size
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run import run_name
from dlm_bench.run.naming import checkpoint_identity
from dlm_bench.sweeps.compose import compose_config

# (size, M) of Table 1's classification and count rows, typed from the paper (not from the rule's YAML)
TABLE1_CLASSIFICATION_COUNT = {"banana": (5300, 53), "thyroid": (3772, 37), "twonorm": (7400, 74),
                               "ringnorm": (7400, 74), "airline": (2055733, 200), "abalone": (4177, 41),
                               "Peds1_dir0": (4000, 40), "Peds1_dir1": (4000, 40), "Peds1_dir2": (4000, 40)}
TABLE1_REGRESSION = {"pol": (15000, 100), "cadata": (20640, 206), "sarcos": (48933, 100), "song": (515345, 100)}


@pytest.mark.parametrize("name", sorted(TABLE1_CLASSIFICATION_COUNT))
def test_rule_gives_table1_m_for_every_classification_and_count_row(name):
    size, m = TABLE1_CLASSIFICATION_COUNT[name]
    assert m_for_size("dlm_table1", size) == m


def test_regression_rows_follow_no_size_rule_so_the_regression_preset_keeps_100():
    """No nondecreasing function of N fits the regression rows (pol < cadata < sarcos in N, 100 < 206 > 100 in M);
    the rule matches none of them (cadata's 206 is N / 100 but above the cap of 200, airline's M), and
    compare_regression trains with the 100 of three of the four."""
    rows = sorted(TABLE1_REGRESSION.values())
    assert any(m1 > m2 for (_, m1), (_, m2) in zip(rows, rows[1:]))
    assert [m_for_size("dlm_table1", n) == m for n, m in TABLE1_REGRESSION.values()] == [False] * 4
    assert 20640 // 100 == 206
    cfg = compose_config(["experiment=compare_regression"])
    assert cfg.model.num_inducing == 100 and cfg.model.num_inducing_rule is None


def test_rule_floor_and_small_files():
    assert [m_for_size("dlm_table1", n) for n in (0, 99, 100, 199, 200, 20099, 20100, 10**7)] == \
        [1, 1, 1, 1, 2, 200, 200, 200]
    with pytest.raises(ConfigError, match="unknown model.num_inducing_rule 'nope'"):
        m_for_size("nope", 1000)


def _count_csv(path, n):
    pd.DataFrame({"x0": [i / n for i in range(n)], "y": [i % 4 for i in range(n)]}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("preset", ["compare_classification", "compare_count"])
def test_presets_resolve_m_from_the_files_rows(preset, tmp_path):
    task = "binary" if preset == "compare_classification" else "count"
    csv = tmp_path / "mine.csv"
    pd.DataFrame({"x0": [i / 4177 for i in range(4177)], "y": [i % 2 for i in range(4177)]}).to_csv(csv, index=False)
    cfg = compose_config([f"experiment={preset}", "dataset=csv", f"dataset.path={csv}", "dataset.target=y",
                          f"dataset.task={task}"])
    assert cfg.model.num_inducing_rule == "dlm_table1"
    resolve_task_defaults(cfg)
    assert cfg.model.num_inducing == 41  # abalone's 4177 rows -> 41
    resolve_task_defaults(cfg)  # idempotent: a run resolves again after its sweep named it
    assert cfg.model.num_inducing == 41


def test_a_hand_given_m_beside_the_rule_is_refused_and_null_rule_keeps_it(tmp_path):
    ov = ["experiment=compare_count", "dataset=csv", f"dataset.path={_count_csv(tmp_path / 'c.csv', 950)}",
          "dataset.target=y", "dataset.task=count"]
    with pytest.raises(ConfigError, match=r"model.num_inducing=30 and model.num_inducing_rule=dlm_table1 \(M = 9"):
        resolve_task_defaults(compose_config(ov + ["model.num_inducing=30"]))
    cfg = compose_config(ov + ["model.num_inducing=30", "model.num_inducing_rule=null"])
    resolve_task_defaults(cfg)
    assert cfg.model.num_inducing == 30


def test_existing_run_names_and_checkpoint_identities_unchanged():
    # computed on main (8e13839) before num_inducing_rule existed: a killed run's checkpoint still resumes
    assert run_name(compose_config(["experiment=dlm_classification", "dlm_data=banana", "method=dlm",
                                    "objective.beta_index=2"])) == "banana_svgp_dlm_betaidx2_seed0_fd13e233"
    assert run_name(compose_config(["experiment=dlm_supp_pol", "method=sq_dlm", "objective.beta_index=3",
                                    "seed=2"])) == "pol_svgp_sq_dlm_betaidx3_seed2_2f714ede"
    assert checkpoint_identity(compose_config(["experiment=dlm_supp_pol", "method=sq_dlm", "objective.beta_index=3",
                                               "seed=2"]))["config"] == "60547dce0721"
