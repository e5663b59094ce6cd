"""What a sweep's job asks of Hydra, answered by sweeps/compose.py alone (issue 72: Hydra only at the edge): the
values the sweep gives a key and the job's overrides, checked against the experiment file's own text and against
the readers the harness has today (run/batched.py sweep_beta_indices, run/harness.py job_overrides), which the
harness is to be handed instead; and the job number that util/logline.py now gets passed in."""

from __future__ import annotations

import pytest

from dlm_bench.sweeps import compose
from dlm_bench.util import logline

EXPERIMENT = "dlm_fig1ab_smoke"  # its hydra.sweeper.params: objective.beta_index: 0,4,8,12,16, seed: 0,1,2


@pytest.fixture
def in_job():
    """This process as a Hydra job of `experiment=dlm_fig1ab_smoke seed=3` (HydraConfig set as a launcher sets it)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    from dlm_bench.config.schema import conf_dir

    overrides = [f"experiment={EXPERIMENT}", "seed=3"]
    compose.register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = hydra_compose(config_name="config", overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    try:
        yield overrides
    finally:
        HydraConfig.instance().cfg = None
        GlobalHydra.instance().clear()


def test_outside_a_job_nothing_is_swept():
    assert compose.swept_values("objective.beta_index") is None
    assert compose.job_overrides() == [] and compose.job_number() is None


def test_the_experiments_sweep_of_a_key(in_job, monkeypatch):
    text = (compose_conf() / "experiment" / f"{EXPERIMENT}.yaml").read_text()
    assert "objective.beta_index: 0,4,8,12,16" in text and "seed: 0,1,2" in text
    monkeypatch.delenv(compose.INDICES_ENV, raising=False)
    assert compose.swept_values("objective.beta_index") == [0, 4, 8, 12, 16] == compose.sweep_beta_indices()
    assert compose.swept_values("seed") == [0, 1, 2]
    assert compose.swept_values("trainer.lr") is None  # not swept by the experiment


def test_the_command_lines_sweep_wins(in_job, monkeypatch):
    monkeypatch.setenv(compose.INDICES_ENV, "range(1,4)")
    assert compose.swept_values("objective.beta_index", "range(1,4)") == [1, 2, 3] == compose.sweep_beta_indices()
    monkeypatch.setenv(compose.INDICES_ENV, "7")
    assert compose.swept_values("objective.beta_index", "7") == [7] == compose.sweep_beta_indices()


def test_the_jobs_overrides(in_job):
    from dlm_bench.sweeps.compose import job_overrides

    assert compose.job_overrides() == in_job == job_overrides()


def test_log_lines_carry_the_number_passed_in(capsys):
    logline.log_line("a")
    with logline.numbered(7):
        logline.log_line("b")
        with logline.numbered(None):
            logline.log_line("c")
        logline.log_line("d")
    logline.log_line("e")
    assert capsys.readouterr().out.splitlines() == [
        "[dlm-bench] a", "[dlm-bench] #7 b", "[dlm-bench] c", "[dlm-bench] #7 d", "[dlm-bench] e"]


def test_progress_events_carry_the_number_passed_in(tmp_path, monkeypatch):
    from dlm_bench.sweeps.progress import PROGRESS_ENV, announce

    events = tmp_path / "events"
    monkeypatch.setenv(PROGRESS_ENV, str(events))
    announce("start")  # no job number: not a sweep's job, nothing written
    with logline.numbered(4):
        announce("end", "ok")
    (line,) = events.read_text().splitlines()
    event, num, _, outcome = line.split(" ")
    assert (event, num, outcome) == ("end", "4", "ok")


def compose_conf():
    from dlm_bench.config.schema import conf_dir

    return conf_dir()
