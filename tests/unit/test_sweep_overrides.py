"""`dlm-bench sweep` validates the grid's first point before submitting: list values are not sweeps."""

import pytest

from dlm_bench import cli


def test_first_grid_point_keeps_list_values():
    # launcher.setup=["a","b"] is one list value; splitting it at the comma used to be a parse error
    cli._validate_first_grid_point(["launcher=slurm", 'launcher.setup=["echo a b","export X=1"]', "seed=0,1,2"])


def test_first_grid_point_still_catches_a_bad_sweep_value():
    with pytest.raises(cli.UserError):
        cli._validate_first_grid_point(["model.kernel=cubic,rbf"])
