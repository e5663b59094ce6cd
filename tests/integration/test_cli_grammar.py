"""Hydra's grammar end to end (issue 75): the issue's commands with flags between overrides, `dataset=csv` and
`dataset=<name>` inside paper experiments (the experiment's grid runs on the named data), a registered dataset read
from the user's copy (dataset.path), and Hydra's quoting of results_dir in a sweep."""

from __future__ import annotations

import json
import math
import re
import shutil

import numpy as np
import pytest

from dlm_bench.cli import main
from tests.helpers import sweeper_params, write_regression_csv


def dry_run_points(text: str) -> list[tuple[str, str]]:
    """(shown overrides, run name) of every point a --dry-run lists."""
    return [(m.group(1).strip(), m.group(2)) for m in re.finditer(r"^\s*\d+  (.*?)  (\S+)  \S.*$", text, re.M)]


def test_run_with_a_flag_between_overrides(capsys, tmp_path):
    """The issue's `run seed=3 --cfg job trainer.max_iters=3` (was: unrecognized arguments: trainer.max_iters=3)."""
    code = main(["run", "seed=3", "--cfg", "job", "trainer.max_iters=3", f"results_dir={tmp_path}"])
    out = capsys.readouterr().out
    assert code == 0
    assert "\nseed: 3\n" in out and "\n  max_iters: 3\n" in out
    assert not list(tmp_path.iterdir())  # --cfg trains and writes nothing


def test_sweep_dry_run_with_overrides_after_the_flag(capsys, tmp_path):
    """The issue's `sweep experiment=dlm_fig1c --dry-run results_dir=out`: results_dir after the flag is read (every
    run name is listed; its folder would be under tmp_path). Smoke size; cadata's availability does not matter here."""
    code = main(["sweep", "experiment=dlm_fig1c_smoke", "--dry-run", f"results_dir={tmp_path / 'out'}", "seed=0",
                 "objective.beta_index=2"])
    out = capsys.readouterr().out
    points = dry_run_points(out)
    assert len(points) == len(sweeper_params("dlm_fig1c_smoke")["method"].split(","))
    # seed=0 and beta_index=2 after the flag replaced the experiment's seed and beta axes
    assert all(shown.endswith("objective.beta_index=2 seed=0") for shown, _ in points), out
    assert code in (0, 2)  # 2: cadata is not available on this machine (said on stderr); the listing is complete
    assert not (tmp_path / "out").exists()


def write_binary_csv(path, n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(int)
    path.write_text("x0,x1,label\n" + "".join(f"{a:.6f},{b:.6f},{c}\n" for (a, b), c in zip(X, y)))
    return path


# (experiment, the csv's own keys, overrides narrowing the grid, the swept keys left in the grid)
CSV_CASES = [
    ("dlm_supp_pol_smoke", ["dataset.target=y", "dataset.task=regression"],
     ["seed=0", "objective.beta_index=4", "protocol.train_size=1000"], ["method"]),
    ("dlm_classification_smoke", ["dataset.target=label", "dataset.task=binary"], ["seed=0", "objective.beta_index=3"],
     ["method", "protocol.train_size"]),  # its dlm_data axis (banana, twonorm presets) gives way to dataset=csv
    ("pac_fig1", ["dataset.target=y", "dataset.task=regression"], [], ["method", "pac.epsilon"]),
]


@pytest.mark.parametrize("experiment,keys,narrow,swept", CSV_CASES, ids=[c[0] for c in CSV_CASES])
def test_dataset_csv_inside_a_paper_experiment(experiment, keys, narrow, swept, capsys, tmp_path):
    """Before: the experiment's own dataset (pol, banana/twonorm, snelson) came back over dataset=csv and every point
    was refused ('the dataset is pol ... add dataset=csv'). Now every point of the grid is on the file."""
    binary = "dataset.task=binary" in keys
    data = write_binary_csv(tmp_path / "b.csv") if binary else write_regression_csv(tmp_path / "r.csv", n=1600)
    code = main(["sweep", f"experiment={experiment}", "dataset=csv", f"dataset.path={data}", *keys, *narrow,
                 "--dry-run", f"results_dir={tmp_path / 'out'}"])
    out, err = capsys.readouterr()
    assert code == 0, err
    points = dry_run_points(out)
    params = sweeper_params(experiment)
    assert len(points) == math.prod(len(params[k].split(",")) for k in swept)
    named = [name for _, name in points if name != "-"]  # a method without beta at beta_index > 0 has no name
    assert named and all(name.startswith("csv_") for name in named), out
    assert "INVALID" not in out and "DATA UNAVAILABLE" not in out


def test_registered_dataset_choice_inside_an_experiment(capsys, tmp_path):
    """dataset=<name> wins over the experiment's dataset as well (pac_fig1 is on snelson): every point is on boston."""
    code = main(["sweep", "experiment=pac_fig1", "dataset=boston", "--dry-run", f"results_dir={tmp_path}"])
    out, err = capsys.readouterr()
    assert code == 0, err
    names = [name for _, name in dry_run_points(out)]
    assert len(names) == 6 and all(name.startswith("boston_") for name in names), out


def test_named_dataset_from_a_copy_of_its_files(shared_data, tmp_path, monkeypatch, capsys):
    """docs/datasets.md: `dataset=<name> dataset.path=<your copy>` for a downloaded dataset: pol read from a copy of
    its four mirrored files. The cache is empty and the mirror an empty folder (it replaces every download origin):
    the copy is the only place pol can come from."""
    copy = tmp_path / "my_pol"
    copy.mkdir()
    for f in (shared_data / "pol" / "fgp").glob("*.asc"):
        shutil.copy(f, copy / f.name)
    (tmp_path / "empty_mirror").mkdir()
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "empty_mirror"))
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "empty_cache"))
    code = main(["run", "dataset=pol", f"dataset.path={copy}", "protocol.train_size=200", "model.num_inducing=5",
                 "trainer.max_iters=2", "trainer.progress=off", f"results_dir={tmp_path / 'out'}"])
    assert code == 0, capsys.readouterr().err
    rec = json.loads(next((tmp_path / "out").glob("default/*/run.json")).read_text())
    assert (rec["dataset"], rec["status"], rec["task"], rec["train_size"]) == ("pol", "ok", "regression", 200)
    assert math.isfinite(rec["metrics"]["test_nll"])


def test_dataset_path_for_a_shipped_dataset_is_one_line(capsys, tmp_path):
    code = main(["run", "dataset=boston", f"dataset.path={tmp_path}", "--cfg", "job"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "dlm-bench: error: dataset.path names your copy of a downloaded dataset's files, but 'boston' is shipped with "
        "the package; add dataset=csv to train on your own file, or remove it")


def test_sweep_reads_hydra_quoted_results_dir(tmp_path, monkeypatch, capsys):
    """`sweep 'results_dir="DIR"'` wrote its runs to a folder named with the quotes ("DIR") in the current
    directory; `run` read the same argument as DIR."""
    monkeypatch.chdir(tmp_path)
    code = main(["sweep", f'results_dir="{tmp_path / "q"}"', "seed=0", "model.num_inducing=5", "trainer.max_iters=2",
                 "launcher=local"])
    assert code == 0, capsys.readouterr().err
    runs = sorted(p.parent.name for p in (tmp_path / "q" / "default").glob("*/run.json"))
    assert len(runs) == 1 and runs[0].startswith("boston_svgp_elbo_beta1_seed0_")
    assert [p.name for p in tmp_path.iterdir()] == ["q"]  # nothing named '"..."' beside it
