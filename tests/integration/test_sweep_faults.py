"""Sweeps and reports under faults (issue 10, sec. 4 and 5): run locks, stopping workers, reports of broken
or ad-hoc sweeps. (Sweeps that run, dry runs, SIGTERM to a sweep: tests/integration/test_sweep_real_runs.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from dlm_bench.cli import main
from dlm_bench.config.schema import GROUPS, conf_dir
from dlm_bench.report.build import build_report
from dlm_bench.report.collect import collect_runs
from dlm_bench.report.figures import make_sweep_figure
from dlm_bench.report.layouts import default_specs
from dlm_bench.report.spec_types import SweepFigureSpec
from dlm_bench.run import run_dir_for
from dlm_bench.run.signals import descendants as _descendants
from dlm_bench.run.signals import stop_workers
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.util.locks import LOCK_NAME, RunLock, holder


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_lock_is_exclusive_and_stale_after_its_holder_is_gone(tmp_path):
    first = RunLock(tmp_path)
    assert first.acquire() and holder(tmp_path)["pid"] == os.getpid()
    assert not RunLock(tmp_path).acquire()  # a live holder
    first.release()
    assert not (tmp_path / LOCK_NAME).exists()
    (tmp_path / LOCK_NAME).write_text(json.dumps({"host": os.uname().nodename, "pid": _dead_pid()}))
    assert holder(tmp_path) is None
    with RunLock(tmp_path) as got:
        assert got
    assert not (tmp_path / LOCK_NAME).exists()


def test_lock_leaves_no_empty_run_dir_it_created(tmp_path):
    # a point beyond the beta grid, or a batched group stopped by SIGTERM, writes nothing in its run dir
    with RunLock(tmp_path / "a" / "run") as got:
        assert got and (tmp_path / "a" / "run" / LOCK_NAME).exists()
    assert not (tmp_path / "a" / "run").exists() and (tmp_path / "a").is_dir()
    with RunLock(tmp_path / "b"):  # a run that wrote its record keeps it
        (tmp_path / "b" / "run.json").write_text("{}")
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["run.json"]
    (tmp_path / "c").mkdir()  # a directory that was there before is not the lock's to remove
    with RunLock(tmp_path / "c"):
        pass
    assert (tmp_path / "c").is_dir()


def test_stop_workers_ends_children_and_grandchildren():
    code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 5
    while len(_descendants(os.getpid())) < 2 and time.time() < deadline:
        time.sleep(0.05)
    pids = _descendants(os.getpid())
    assert child.pid in pids and len(pids) >= 2
    stop_workers(grace_s=2)
    child.wait(timeout=5)
    time.sleep(0.2)
    alive = [p for p in pids if Path(f"/proc/{p}").exists() and Path(f"/proc/{p}/stat").read_text().split(")")[1].split()[0] != "Z"]
    assert alive == []


def _record(exp: str, seed: int, beta: float, nll: float, **cfg) -> dict:
    config = {"seed": seed, "experiment": exp, "objective": {"beta": beta}, "model": {"num_inducing": 10}}
    for k, v in cfg.items():
        config["model"][k] = v
    return {"schema": 1, "status": "ok", "error": None, "paper": "dlm", "experiment": exp, "dataset": "boston",
            "task": "regression", "model": "svgp", "objective": "elbo", "estimator": "exact", "likelihood": "gaussian",
            "beta": beta, "seed": seed, "split": "dlm_regression", "train_size": 339, "num_inducing": 10,
            "hyperparameters": "joint", "metrics": {"test_nll": nll, "test_mse": 2 * nll}, "train": {}, "config": config,
            "env": {}}


def test_report_skips_broken_run_json_and_draws_the_adhoc_sweep(tmp_path):
    rng = np.random.default_rng(0)
    values = {}
    for beta in (0.1, 1.0, 10.0):
        for seed in range(3):
            nll = float(rng.normal(beta, 0.1))
            values.setdefault(beta, []).append(nll)
            d = tmp_path / "adhoc" / f"b{beta}_s{seed}"
            d.mkdir(parents=True)
            (d / "run.json").write_text(json.dumps(_record("adhoc", seed, beta, nll)))
    broken = {"trunc": '{"schema": 1, "status": "o', "list": "[]", "null": "null", "empty": "{}"}
    for name, text in broken.items():
        (tmp_path / "adhoc" / name).mkdir()
        (tmp_path / "adhoc" / name / "run.json").write_text(text)
    df, skipped = collect_runs([tmp_path])
    assert len(df) == 9 and sorted(p.parent.name for p, _ in skipped) == sorted(broken)
    made = build_report([tmp_path], tmp_path / "report")
    index = (tmp_path / "report" / "index.md").read_text()
    assert all(f"{tmp_path / 'adhoc' / name / 'run.json'}:" in index for name in broken)
    assert (tmp_path / "report" / "adhoc_sweep_objective-beta.png").is_file()
    [spec] = [s for s in default_specs(df) if isinstance(s, SweepFigureSpec)]
    assert spec.x == "cfg.objective.beta" and spec.others == ()
    fig = make_sweep_figure(df, spec)
    line = fig.axes[0].lines[0]
    np.testing.assert_allclose(line.get_xdata(), [0.1, 1.0, 10.0])
    np.testing.assert_allclose(line.get_ydata(), [np.mean(values[b]) for b in (0.1, 1.0, 10.0)])
    # the error bar of beta=1 spans mean ± std(ddof=1)/sqrt(3)
    segs = fig.axes[0].collections[0].get_segments()
    se = np.std(values[1.0], ddof=1) / np.sqrt(3)
    np.testing.assert_allclose([segs[1][0][1], segs[1][1][1]], [np.mean(values[1.0]) - se, np.mean(values[1.0]) + se])
    assert made["runs"] == 9


def test_report_lines_per_other_swept_key(tmp_path):
    for m in (10, 20):
        for beta in (0.1, 1.0):
            for seed in range(2):
                d = tmp_path / f"m{m}_b{beta}_s{seed}"
                d.mkdir()
                (d / "run.json").write_text(json.dumps(_record("x", seed, beta, beta + m, num_inducing=m)))
    df, _ = collect_runs([tmp_path])
    specs = {s.x: s for s in default_specs(df) if isinstance(s, SweepFigureSpec)}
    assert set(specs) == {"cfg.objective.beta", "cfg.model.num_inducing"}
    fig = make_sweep_figure(df, specs["cfg.objective.beta"])
    handles, labels = fig.axes[0].get_legend_handles_labels()
    assert labels == ["model.num_inducing=10", "model.num_inducing=20"]
    np.testing.assert_allclose(handles[1].lines[0].get_ydata(), [20.1, 21.0])


def test_settings_a_method_preset_fixes_split_series_but_are_no_axis(tmp_path):
    """method=dlm,elbo,beta_elbo over a beta grid (the README's own-data sweep): the presets fix objective.name,
    model.noise_init and the beta-grid flag, so the one figure is against beta, a series per preset (the ELBO at beta
    = 1, noise_init 0.1 and no grid, is its own); a figure against objective.name would draw 2 points a beta."""
    presets = {"dlm": ("dlm", 1.0, True, (0.1, 1.0, 10.0)), "beta_elbo": ("elbo", 1.0, True, (0.1, 1.0, 10.0)),
               "elbo": ("elbo", 0.1, False, (1.0,))}
    for name, (objective, noise, grid, betas) in presets.items():
        for beta in betas:
            for seed in range(2):
                rec = _record("own", seed, beta, beta + noise + (objective == "dlm") + seed, noise_init=noise)
                rec["objective"] = objective
                rec["config"]["objective"].update(name=objective, beta_grid=grid)
                d = tmp_path / f"{name}_b{beta}_s{seed}"
                d.mkdir()
                (d / "run.json").write_text(json.dumps(rec))
    df, _ = collect_runs([tmp_path])
    specs = [s for s in default_specs(df) if isinstance(s, SweepFigureSpec)]
    assert [(s.x, s.others) for s in specs] == [("cfg.objective.beta", ("cfg.objective.name", "cfg.model.noise_init"))]
    fig = make_sweep_figure(df, specs[0])
    handles, labels = fig.axes[0].get_legend_handles_labels()
    series = dict(zip(labels, handles))
    assert len(series) == 3
    elbo = series["objective.name=elbo, model.noise_init=0.1"].lines[0]
    np.testing.assert_allclose(elbo.get_xdata(), [1.0]) and np.testing.assert_allclose(elbo.get_ydata(), [1.1 + 0.5])
    dlm = series["objective.name=dlm, model.noise_init=1.0"].lines[0]
    np.testing.assert_allclose(dlm.get_ydata(), [b + 2.5 for b in (0.1, 1.0, 10.0)])  # mean over seeds 0, 1


def test_run_cfg_prints_config_and_run_dir_without_training(tmp_path, capsys):
    ov = ["objective=dlm", "seed=3", f"results_dir={tmp_path}"]
    assert main(["run", "--cfg", "job"] + ov) == 0
    out = capsys.readouterr().out
    cfg = yaml.safe_load(out)
    assert cfg["seed"] == 3 and cfg["objective"]["name"] == "dlm" and set(GROUPS[:7]) <= set(cfg)
    assert out.splitlines()[-1] == f"# would write: {run_dir_for(compose_config(ov))}"
    assert list(tmp_path.iterdir()) == []
    assert main(["run", "--cfg", "seed=4"]) == 0  # `--cfg` followed by an override
    assert yaml.safe_load(capsys.readouterr().out)["seed"] == 4


def test_run_help_lists_groups_and_options(capsys):
    from dlm_bench.data import DATASETS

    with pytest.raises(SystemExit) as e:
        main(["run", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for group in GROUPS + ("experiment",):
        options = (sorted([*DATASETS, "csv"]) if group == "dataset"
                   else sorted(p.stem for p in (conf_dir() / group).glob("*.yaml")))
        line = next(l for l in out.splitlines() if l.strip().startswith(f"{group} ("))
        assert line.split("): ", 1)[1] == ", ".join(options)
    assert "dataset (default: boston)" in out and "--cfg" in out


def test_a_worker_stopped_by_sigterm_starts_no_further_job(tmp_path, monkeypatch):
    """loky hands a worker that unwound its job on SIGTERM the next job before the parent's stop_workers()
    SIGKILLs it; that job must start nothing (it took locks and made run dirs it never released)."""
    import signal

    from dlm_bench.errors import Terminated
    from dlm_bench.run import signals
    from dlm_bench.sweeps import job, launch

    monkeypatch.setattr(signals, "stop_workers", lambda **_: [])
    with pytest.raises(Terminated):
        signals.raise_terminated(signal.SIGTERM, None)
    cfg = compose_config(["trainer.max_iters=5", "model.num_inducing=10", f"results_dir={tmp_path}"])
    with pytest.raises(Terminated):
        job.sweep_job(cfg)
    assert not tmp_path.exists() or list(tmp_path.rglob("*")) == []
    # a new sweep in this process starts afresh
    counts = launch.run_sweep(["trainer.max_iters=5", "model.num_inducing=10", "launcher=local",
                              "trainer.progress=off", f"results_dir={tmp_path}"])
    assert counts["ok"] == 1


@pytest.mark.parametrize("err", ["DatasetError", "PermissionError", "ConfigError"])
def test_an_error_of_the_machine_is_not_written_as_the_points_result(tmp_path, monkeypatch, err):
    """Issue 54: data that cannot be had, a permission or a missing device, raised before training, is the machine's:
    no failed run.json (which every later sweep would skip), outcome not_run; a training failure is still recorded."""
    from dlm_bench.data import DatasetError
    from dlm_bench.errors import ConfigError
    from dlm_bench.sweeps import job

    exc = {"DatasetError": DatasetError, "PermissionError": PermissionError, "ConfigError": ConfigError}[err]

    def refuse(cfg, *passed):  # sweep_job passes the beta indices and overrides of its Hydra job
        raise exc("cannot download cadata (no connection)")

    monkeypatch.setattr(job, "execute", refuse)
    cfg = compose_config(["trainer.max_iters=5", "model.num_inducing=10", f"results_dir={tmp_path}"])
    assert job.sweep_job(cfg) == "not_run"
    assert not list(tmp_path.rglob("run.json"))

    def crash(cfg, *passed):
        raise RuntimeError("a bug of this point")

    monkeypatch.setattr(job, "execute", crash)
    assert job.sweep_job(cfg) == "failed"
    (written,) = tmp_path.rglob("run.json")
    assert json.loads(written.read_text())["status"] == "failed"
