"""`dlm-bench sweep` composes and validates every grid point before submitting: list values are not sweeps."""

from dlm_bench.sweeps.plan import plan_sweep


def test_list_values_are_one_value_and_every_point_is_composed(tmp_path):
    # launcher.setup=["a","b"] is one list value; splitting it at the comma used to be a parse error
    setup = 'launcher.setup=["echo a b","export X=1"]'
    plan = plan_sweep(["launcher=slurm", setup, "seed=0,1,2", "objective.beta=range(3,9)", f"results_dir={tmp_path}"])
    assert len(plan) == 18 and {p.state for p in plan} == {"new"}
    assert all(setup in p.overrides for p in plan)


def test_a_bad_value_anywhere_in_the_grid_is_invalid(tmp_path):
    for grid in ("model.kernel=cubic,rbf", "model.kernel=rbf,cubic"):  # not only the first point
        states = [(p.shown, p.state) for p in plan_sweep([grid, f"results_dir={tmp_path}"])]
        assert states == [("model.kernel=rbf", "new"), ("model.kernel=cubic", "invalid")] or \
            states == [("model.kernel=cubic", "invalid"), ("model.kernel=rbf", "new")]
        bad = [p for p in plan_sweep([grid, f"results_dir={tmp_path}"]) if p.state == "invalid"][0]
        assert "cubic" in bad.reason and "\n" not in bad.reason
