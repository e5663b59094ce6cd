"""`dlm-bench sweep` validates the grid's first point before submitting: list values are not sweeps."""

import pytest

from dlm_bench import cli


def test_first_grid_point_keeps_list_values(monkeypatch):
    # launcher.setup=["a","b"] is one list value; splitting it at the comma used to be a parse error
    seen = []
    real = cli.compose_config
    monkeypatch.setattr(cli, "compose_config", lambda ov: seen.append(list(ov)) or real(ov))
    setup = 'launcher.setup=["echo a b","export X=1"]'
    cli._validate_first_grid_point(["launcher=slurm", setup, "seed=0,1,2", "objective.beta=range(3,9)"])
    # the first point: a,b,c cut at its first value, range() at its start, a list value untouched
    assert seen == [["launcher=slurm", setup, "seed=0", "objective.beta=3"]]
    cfg = real(seen[0])
    assert list(cfg.launcher.setup) == ["echo a b", "export X=1"] and (cfg.seed, cfg.objective.beta) == (0, 3.0)


def test_first_grid_point_still_catches_a_bad_sweep_value():
    with pytest.raises(cli.UserError, match="cubic"):
        cli._validate_first_grid_point(["model.kernel=cubic,rbf"])
    cli._validate_first_grid_point(["model.kernel=rbf,cubic"])  # only the first point is composed
