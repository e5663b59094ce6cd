"""Hostile inputs, table-driven (issue 27): each row is a command line, the exit code it must end with and words
its output must (and must not) contain. The CLI runs in-process (dlm_bench.cli.main), so the whole table costs
seconds, not a Python start-up per row.

For exit 2 the output must be one line on stderr, `dlm-bench: error: ...`, without a traceback or "internal
error", and a `run` must have written no run.json (refused before anything trained). Rows:
* data: dataset=csv files that would silently corrupt a benchmark (the target leaking into the inputs, one typo
  making hundreds of dummy columns, nothing to learn, labels of the wrong kind, a device as the path);
* config: values outside their domain, unknown keys and options, conflicting or incompatible choices;
* report: run.json / curve.csv files breaking the results contract (skipped and listed in index.md; the report
  goes on), unreadable inputs and unwritable --out (exit 2);
* locks: a sweep's view of a run lock whose pid is dead, reused or from before a reboot (stale: the point is
  `new`) or alive (`running elsewhere`).
A few rows are positive controls: valid inputs that must still run (exit 0).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dlm_bench.cli import main
from dlm_bench.results.schema import check_curve_csv, check_run_record
from dlm_bench.sweeps.compose import compose_config
from dlm_bench.util.locks import LOCK_NAME, boot_id, proc_start_time

HANG_LIMIT_S = 60  # a row still running after this has hung (/dev/zero used to be hashed forever)


@dataclass
class Row:
    id: str
    args: list[str]
    code: int
    words: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    setup: object = None  # setup(ctx) before the command: writes the files the row needs
    env: dict | None = None  # environment for the command ({tmp}, {refused}: a 127.0.0.1 port that refuses)


# --- fixtures: the files the rows read ------------------------------------------------------------------------


def _regression(n=40, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-2, 2, n), rng.uniform(-2, 2, n)
    return pd.DataFrame({"a": a, "b": b, "y": np.sin(2 * a) + 0.5 * b + 0.1 * rng.normal(size=n)})


def _write(fx: Path, name: str, text: str) -> None:
    (fx / name).write_text(text)


def _csv(df: pd.DataFrame) -> str:
    return df.to_csv(index=False)


def make_tables(fx: Path) -> None:
    base = _regression()
    rng = np.random.default_rng(1)
    _write(fx, "good.csv", _csv(base))
    lines = _csv(base).splitlines()
    _write(fx, "dup_target.csv", "a,b,y,y\n" + "\n".join(f"{ln},{ln.split(',')[-1]}" for ln in lines[1:]) + "\n")
    _write(fx, "dup_feature.csv", "a,a,y\n" + "\n".join(lines[1:]) + "\n")
    _write(fx, "alias_target.csv", "a,Y,y\n" + "\n".join(lines[1:]) + "\n")
    _write(fx, "space_target.csv", "a, y,y\n" + "\n".join(lines[1:]) + "\n")
    _write(fx, "copy_target.csv", _csv(base.assign(b=base["y"])))
    typo = base.astype(object)
    typo.loc[16, "a"] = "abc"
    _write(fx, "typo_feature.csv", _csv(typo))
    typo_y = base.astype(object)
    typo_y.loc[5, "y"] = "abc"
    _write(fx, "typo_target.csv", _csv(typo_y))
    _write(fx, "inf_feature.csv", _csv(base.assign(a=np.where(np.arange(40) == 3, np.inf, base["a"]))))
    _write(fx, "ninf_feature.csv", _csv(base.assign(b=np.where(np.arange(40) == 7, -np.inf, base["b"]))))
    _write(fx, "inf_target.csv", _csv(base.assign(y=np.where(np.arange(40) == 2, np.inf, base["y"]))))
    _write(fx, "const_target.csv", _csv(base.assign(y=3.0)))
    _write(fx, "missing.csv", "a,b,y\n1,2,3\n,2,3\n4,5,6\n")
    _write(fx, "nan_target.csv", "a,b,y\n1,2,3\n2,2,nan\n4,5,6\n")
    _write(fx, "header_only.csv", "a,b,y\n")
    _write(fx, "empty.csv", "")
    _write(fx, "target_only.csv", "y\n1\n2\n3\n")
    for name, labels in {"bin01": [0, 1], "binpm": [-1, 1], "bin_one": [1], "bin_half": [0, 0.5], "bin_25": [2, 5],
                         "bin_three": [0, 1, 2], "bin_text3": ["a", "b", "c"], "bin_mixed": [0, 1, "x"],
                         "bin_bool": [True, False], "bin_truefalse_text": ["true", "FALSE"],
                         "count_neg": [-1, 0, 2], "count_frac": [0, 1.5, 2], "count_const": [4],
                         "count_ok": [0, 1, 2, 5], "bin_all_true": [True]}.items():
        y = [labels[i % len(labels)] for i in range(40)]
        rng.shuffle(y)
        _write(fx, f"{name}.csv", _csv(base.assign(y=y)))
    _write(fx, "dup_target.tsv", "a\tb\ty\ty\n" + "\n".join("\t".join(ln.split(",") + [ln.split(",")[-1]])
                                                           for ln in lines[1:]) + "\n")
    cat = base.assign(colour=[["red", "green", "blue"][i % 3] for i in range(40)])
    _write(fx, "text_feature.csv", _csv(cat))  # an all-text column: dummy-coded, as documented
    zip_codes = base.assign(zip=[[1010, 2020, 3030][i % 3] for i in range(40)])
    _write(fx, "zip.csv", _csv(zip_codes))
    (fx / "folder").mkdir()
    (fx / "garbage.csv").write_bytes(bytes(np.random.default_rng(2).integers(0, 256, 4000, dtype=np.uint8)))
    # issue 58: digit grouping read as text, values whose variance overflows float64, a large text-label binary table
    grouped = [f"{v:,.3f}" for v in rng.uniform(1e3, 2e6, 40)]  # "1,274,286.413"
    _write(fx, "thousands_feature.csv", _csv(base.assign(a=grouped)))
    _write(fx, "thousands_target.csv", _csv(base.assign(y=grouped)))
    _write(fx, "huge_target.csv", _csv(base.assign(y=np.where(np.arange(40) == 4, 1e300, base["y"]))))
    _write(fx, "huge_feature.csv", _csv(base.assign(b=np.where(np.arange(40) == 3, -1e300, base["b"]))))
    _write(fx, "const_features.csv", _csv(base.assign(a=1.5, b=-2.0)))  # issue 75: trained on nothing before
    _write(fx, "one_const_feature.csv", _csv(base.assign(a=1.5)))
    _write(fx, "const_text_feature.csv", _csv(pd.DataFrame({"c": ["red"] * 40, "y": base["y"]})))
    big = _regression(n=1200, seed=2)  # > 1000 test rows + validation: the classification split leaves training rows
    _write(fx, "yesno_big.csv", _csv(big.assign(y=np.where(big["a"] + big["b"] > 0, "yes", "no"))))


# --- report fixtures ----------------------------------------------------------------------------------------


def record(**kw) -> dict:
    """A run.json that follows the results contract (docs/results.md)."""
    rec = {"schema": 1, "status": "ok", "error": None, "paper": "dlm", "experiment": "hostile", "dataset": "boston",
           "task": "regression", "model": "svgp", "objective": "elbo", "estimator": "exact", "likelihood": "gaussian",
           "beta": 1.0, "seed": 0, "split": "dlm_regression", "train_size": 100, "num_inducing": 10,
           "hyperparameters": "joint", "metrics": {"test_nll": 0.5, "test_mse": 0.2},
           "train": {"iterations": 10, "wall_s": 1.0}, "config": {"model": {"name": "svgp"}}, "env": {"git": "x"}}
    rec.update(kw)
    return rec


def write_run(root: Path, name: str, rec, curve: str | None = None) -> Path:
    d = root / "hostile" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "run.json").write_text(rec if isinstance(rec, str) else json.dumps(rec))
    if curve is not None:
        (d / "curve.csv").write_text(curve)
    return d


def two_good_runs(ctx) -> Path:
    root = ctx["tmp"] / "res"
    for seed in (0, 1):
        write_run(root, f"good{seed}", record(seed=seed, metrics={"test_nll": 0.5 + seed, "test_mse": 0.2}),
                  "iteration,wall_s,loss\n1,0.1,3.0\n2,0.2,2.5\n")
    return root


def bad_run(**fields):
    def setup(ctx):
        write_run(two_good_runs(ctx), "bad", record(**fields))
    return setup


def bad_run_text(text):
    def setup(ctx):
        write_run(two_good_runs(ctx), "bad", text)
    return setup


def dropped_field(key):
    def setup(ctx):
        rec = record()
        del rec[key]
        write_run(two_good_runs(ctx), "bad", rec)
    return setup


GOOD_CURVE = "iteration,wall_s,loss,test_nll\n1,0.1,3,0.9\n2,0.2,2.5,0.8\n"
TEXT_CURVE = "iteration,wall_s,loss,test_nll\n1,abc,xyz,abc\n2,abc,xyz,xyz\n"  # within the contract, nothing to draw


def curve_runs(bad_curve: str, first: str = GOOD_CURVE):
    """Learning-curve runs (dlm_supp_fig15 draws curve.csv): seed 0 with `first` (good), seed 1 with `bad_curve`."""
    def setup(ctx):
        root = ctx["tmp"] / "res"
        for seed, curve in ((0, first), (1, bad_curve)):
            write_run(root, f"curve{seed}", record(experiment="dlm_supp_fig15", objective="dlm", beta=0.1, seed=seed,
                                                   metrics={"test_nll": 0.8, "test_mse": 0.2}), curve)
    return setup


def fifo_run(ctx):
    root = two_good_runs(ctx)
    (root / "hostile" / "fifo").mkdir()
    os.mkfifo(root / "hostile" / "fifo" / "run.json")


def only_bad(ctx):
    write_run(ctx["tmp"] / "res", "bad", record(seed="abc"))


def out_is_file(ctx):
    two_good_runs(ctx)
    (ctx["tmp"] / "taken").write_text("x")


# --- lock fixtures ------------------------------------------------------------------------------------------


def _point_dir(ctx) -> Path:
    from dlm_bench.run.naming import run_dir_for

    return run_dir_for(compose_config([f"results_dir={ctx['tmp']}/res", "seed=0"]))


def lock(**change):
    """A .lock in the run dir of the sweep point `seed=0`, naming the live helper process (then `change`d)."""
    def setup(ctx):
        pid = ctx["sleeper"]
        info = {"host": socket.gethostname(), "pid": pid, "start": proc_start_time(pid), "boot": boot_id()}
        info.update(change)
        if info["pid"] == "dead":
            p = subprocess.Popen([sys.executable, "-c", "pass"])
            p.wait()
            info["pid"] = p.pid
        d = _point_dir(ctx)
        d.mkdir(parents=True)
        (d / LOCK_NAME).write_text(json.dumps({k: v for k, v in info.items() if v is not None}))
    return setup


def garbled_lock(age_s):
    def setup(ctx):
        d = _point_dir(ctx)
        d.mkdir(parents=True)
        (d / LOCK_NAME).write_text("{not json")
        t = time.time() - age_s
        os.utime(d / LOCK_NAME, (t, t))
    return setup


# --- the table ----------------------------------------------------------------------------------------------

R = "results_dir={tmp}/res"
TINY = ["trainer.max_iters=2", "trainer.progress=off", "model.num_inducing=5", R]


def csv_run(file, *extra, task="regression", target="y"):
    protocol = [] if task == "regression" else ["protocol=dlm_classification", "protocol.test_size=10"]
    return ["run", "dataset=csv", f"dataset.path={{fx}}/{file}", f"dataset.target={target}", f"dataset.task={task}",
            *protocol, *extra, *TINY]


def tiny_without(key):
    """TINY, less the setting a row is about (a later override would win)."""
    return [a for a in TINY if a.partition("=")[0] != key]


NOT_REGULAR = "not a regular file"
LEAK = "leak the target into the inputs"
BINARY = "needs labels {0, 1}, {-1, 1} or {False, True}"

DATA_ROWS = [
    Row("dev_zero", csv_run("x.csv")[:2] + ["dataset.path=/dev/zero", "dataset.target=y", "dataset.task=regression"]
        + TINY, 2, ("/dev/zero", NOT_REGULAR)),
    Row("dev_null", ["run", "dataset=csv", "dataset.path=/dev/null", "dataset.target=y", "dataset.task=regression",
                     *TINY], 2, ("/dev/null", NOT_REGULAR)),
    Row("folder", csv_run("folder"), 2, ("a folder", NOT_REGULAR)),
    Row("fifo", [a.replace("{fx}", "{tmp}") for a in csv_run("fifo.csv")], 2, (NOT_REGULAR,),
        setup=lambda ctx: os.mkfifo(ctx["tmp"] / "fifo.csv")),
    Row("no_such_file", csv_run("nope.csv"), 2, ("no such file",)),
    Row("dup_target", csv_run("dup_target.csv"), 2, ("duplicate column", "'y' (2 times)", LEAK)),
    Row("dup_target_tsv", csv_run("dup_target.tsv"), 2, ("duplicate column", "'y' (2 times)")),
    Row("dup_feature", csv_run("dup_feature.csv"), 2, ("duplicate column", "'a' (2 times)")),
    Row("alias_target_case", csv_run("alias_target.csv"), 2, ("'Y' is named like the target 'y'", LEAK)),
    Row("alias_target_space", csv_run("space_target.csv"), 2, ("duplicate column", "'y' (2 times)", LEAK)),
    Row("copy_of_target", csv_run("copy_target.csv"), 2, ("column 'b' is a copy of the target 'y'", LEAK)),
    Row("typo_feature", csv_run("typo_feature.csv"), 2, ("column 'a' mixes numbers and text", "'abc'", "data row 17",
                                                         "dataset.categorical=[a]")),
    Row("typo_target", csv_run("typo_target.csv"), 2, ("target column 'y' is not numeric", "'abc'", "data row 6")),
    Row("inf_feature", csv_run("inf_feature.csv"), 2, ("column 'a' has a non-finite value", "data row 4")),
    Row("ninf_feature", csv_run("ninf_feature.csv"), 2, ("column 'b' has a non-finite value (-inf)", "data row 8")),
    Row("inf_target", csv_run("inf_target.csv"), 2, ("target column 'y' has a non-finite value", "data row 3")),
    Row("constant_target", csv_run("const_target.csv"), 2, ("target column 'y' is constant", "every row is 3")),
    Row("missing_cell", csv_run("missing.csv"), 2, ("missing values in column(s) a",)),
    Row("nan_target", csv_run("nan_target.csv"), 2, ("missing values in column(s) y",)),
    Row("header_only", csv_run("header_only.csv"), 2, ("no data rows",)),
    Row("empty_file", csv_run("empty.csv"), 2, ("cannot read",)),
    Row("target_only", csv_run("target_only.csv"), 2, ("no feature columns",)),
    Row("target_not_a_column", csv_run("good.csv", target="price"), 2, ("dataset.target='price' is not a column",)),
    Row("task_unknown", csv_run("good.csv", task="ranking"), 2, ("ranking",)),
    Row("no_target", ["run", "dataset=csv", "dataset.path={fx}/good.csv", *TINY], 2, ("needs dataset.path",)),
    Row("categorical_unknown", csv_run("good.csv", "dataset.categorical=[c]"), 2,
        ("dataset.categorical names 'c'", "not a column")),
    Row("categorical_target", csv_run("good.csv", "dataset.categorical=[y]"), 2, ("dataset.categorical lists the target",)),
    Row("binary_one_class", csv_run("bin_one.csv", task="binary"), 2, ("needs two classes", "1 distinct value(s) (1)")),
    Row("binary_0_half", csv_run("bin_half.csv", task="binary"), 2, (BINARY, "{0, 0.5}")),
    Row("binary_2_5", csv_run("bin_25.csv", task="binary"), 2, (BINARY, "{2, 5}")),
    Row("binary_three", csv_run("bin_three.csv", task="binary"), 2, ("needs two classes", "3 distinct value(s)")),
    Row("binary_text_three", csv_run("bin_text3.csv", task="binary"), 2, ("needs two classes", "3 distinct values")),
    Row("binary_mixed", csv_run("bin_mixed.csv", task="binary"), 2, ("mixes numbers and text", "'x'")),
    Row("count_negative", csv_run("count_neg.csv", task="count"), 2, ("negative or non-integer", "-1")),
    Row("count_fraction", csv_run("count_frac.csv", task="count"), 2, ("negative or non-integer", "1.5")),
    Row("count_constant", csv_run("count_const.csv", task="count"), 2, ("target column 'y' is constant",)),
    Row("binary_all_true", csv_run("bin_all_true.csv", task="binary"), 2, ("needs two classes", "1 distinct value(s) (1)")),
    # positive controls: valid tables still train (two iterations)
    Row("ok_regression", csv_run("good.csv"), 0, ("status=ok",)),
    Row("ok_declared_categorical", csv_run("typo_feature.csv", "dataset.categorical=[a]"), 0, ("status=ok",)),
    Row("ok_numeric_declared_categorical", csv_run("zip.csv", "dataset.categorical=[zip]"), 0, ("status=ok",)),
    Row("ok_text_feature", csv_run("text_feature.csv"), 0, ("status=ok",)),
    Row("ok_binary_pm1", csv_run("binpm.csv", task="binary"), 0, ("status=ok",)),
    Row("ok_binary_bool", csv_run("bin_bool.csv", task="binary"), 0, ("status=ok",)),
    Row("ok_binary_true_false_text", csv_run("bin_truefalse_text.csv", task="binary"),
        0, ("status=ok",)),
    Row("ok_count", csv_run("count_ok.csv", task="count"), 0, ("status=ok",)),
    # issue 58: trained on bad input before
    Row("thousands_separator_feature", csv_run("thousands_feature.csv"), 2,
        ("column 'a' holds numbers with thousands separators", "data row 1", "without digit grouping")),
    Row("thousands_separator_target", csv_run("thousands_target.csv"), 2,
        ("target column 'y' holds numbers with thousands separators",)),
    Row("target_1e300", csv_run("huge_target.csv"), 2,
        ("target column 'y' has values too large for float64", "1e+300 in data row 5")),
    Row("feature_minus_1e300", csv_run("huge_feature.csv"), 2,
        ("column 'b' has values too large for float64", "-1e+300 in data row 4")),
    Row("binary_csv_regression_protocol", csv_run("bin01.csv", task="binary")[:6] + ["protocol=dlm_regression", *TINY],
        2, ("protocol=dlm_regression is the regression split", "binary task", "protocol=dlm_classification")),
    Row("binary_csv_regression_protocol_name", csv_run("bin01.csv", "protocol.name=dlm_regression", task="binary"),
        2, ("protocol.name=dlm_regression is the regression split",)),
    # issue 75: trained on bad input before
    Row("bool_target_regression", csv_run("bin_bool.csv"), 2,
        ("target column 'y' holds True/False labels, but dataset.task=regression", "use dataset.task=binary")),
    Row("bool_target_regression_text", csv_run("bin_truefalse_text.csv"), 2, ("True/False labels",)),
    Row("all_features_constant", csv_run("const_features.csv"), 2,
        ("every feature column is constant (a=1.5, b=-2.0)", "nothing to learn from")),
    Row("all_features_constant_text", csv_run("const_text_feature.csv"), 2, ("every feature column is constant",)),
    Row("ok_one_feature_constant", csv_run("one_const_feature.csv"), 0, ("status=ok",)),
    # issue 58: runs say what they did (a binary CSV without a protocol gets the classification split: see
    # test_binary_csv_gets_its_split_and_label_map for run.json)
    Row("ok_binary_csv_default_protocol", ["run", "dataset=csv", "dataset.path={fx}/yesno_big.csv", "dataset.target=y",
                                           "dataset.task=binary", *TINY], 0, ("test_error=", "status=ok"), ("test_mse",)),
    Row("ok_binary_line_prints_error", csv_run("binpm.csv", task="binary"), 0, ("test_error=",), ("test_mse",)),
]

# config values outside their domain: (key, value, words); each is refused before any data is read
POSITIVE = "must be a finite number > 0"
DOMAIN = [
    *[("objective.beta", v, POSITIVE) for v in ("0", "-1", "nan", "inf", "-inf", "-0.0")],
    *[("objective.min_beta", v, POSITIVE) for v in ("0", "nan")],
    *[("trainer.lr", v, POSITIVE) for v in ("0", "-0.1", "nan", "inf")],
    *[("trainer.stochastic_lr", v, POSITIVE) for v in ("0", "nan")],
    *[(f"model.{k}", v, POSITIVE) for k in ("lengthscale_init", "outputscale_init", "noise_init")
      for v in ("0", "-1", "nan", "inf")],
    *[("trainer.max_iters", v, "must be an integer >= 1") for v in ("0", "-1")],
    ("trainer.batch_size", "0", "must be an integer >= 1 or null"),
    ("trainer.epochs", "0", "must be an integer >= 1 or null"),
    ("trainer.window", "0", "must be an integer >= 1"),
    ("trainer.track_every", "0", "must be an integer >= 1 or null"),
    *[("trainer.tol", v, "trainer.tol must be a finite number") for v in ("nan", "inf", "-inf")],
    ("trainer.tol_on", "median", "must be mean or sum"),
    ("seed", "-1", "seed must be an integer >= 0"),
    *[("model.num_inducing", v, "must be an integer >= 1") for v in ("0", "-5")],
    *[("model.matern_nu", v, "must be 0.5, 1.5 or 2.5") for v in ("1.0", "3.5")],
    ("objective.beta_index", "-1", "must be an integer >= 0 or null"),
    ("objective.pretrain_model", "foo", "must be auto, svgp or sgpr"),
    ("objective.pretrain_epochs", "0", "must be an integer >= 1 or null"),
    ("objective.pretrain_beta", "half", "must be one or same"),
    *[("protocol.train_frac", v, "protocol.train_frac must be in (0, 1)") for v in ("0", "1", "1.5", "nan")],
    *[("protocol.val_frac", v, "protocol.val_frac must be in [0, 1)") for v in ("1", "-0.1")],
    ("protocol.train_size", "0", "must be an integer >= 1 or null"),
    ("protocol.test_size", "0", "must be an integer >= 1 or null"),
    ("launcher.n_jobs", "0", "must be an integer >= 1"),
    ("launcher.cpus", "0", "must be an integer >= 1 or null"),
]
TYPES = [  # values of the wrong type: Hydra's schema check, one line
    ("trainer.lr", "abc", "trainer.lr"), ("seed", "abc", "seed"), ("seed", "1.5", "seed"),
    ("model.num_inducing", "ten", "model.num_inducing"), ("model.ard", "maybe", "model.ard"),
    ("model.kernel", "cubic", "Invalid value 'cubic', expected one of [rbf, matern]"),
    ("dtype", "float16", "float16"), ("device", "tpu", "tpu"), ("objective.beta", "[1,2]", "objective.beta"),
    ("trainer.max_iters", "1.5", "trainer.max_iters"),
]
UNKNOWN = [
    (["trainer.nope=1"], "unknown config key 'trainer.nope'"),
    (["model.foo=1"], "unknown config key 'model.foo'"),
    (["dataset.nope=1"], "unknown config key 'dataset.nope'"),
    (["nope=1"], "nope"),
    (["+foo=1"], "cannot add or delete config key 'foo'"),
    (["~trainer.lr"], "cannot add or delete config key 'trainer.lr'"),
    (["dataset=nope"], "unknown dataset 'nope'"),
    (["model=nope"], "unknown model 'nope'"),
    (["objective=nope"], "unknown objective 'nope'"),
    (["estimator=nope"], "unknown estimator 'nope'"),
    (["trainer=nope"], "unknown trainer 'nope'"),
    (["protocol=nope"], "unknown protocol 'nope'"),
    (["launcher=nope"], "unknown launcher 'nope'"),
    (["method=nope"], "unknown method 'nope'"),
    (["experiment=nope"], "unknown experiment 'nope'"),
    (["dlm_data=nope"], "unknown dlm_data 'nope'"),
    (["dataset=twonorm", "dlm_data=ringnorm"], "dataset=twonorm conflicts with dlm_data=ringnorm"),
]
COMBINATIONS = [  # incompatible choices (dlm_bench/compatibility.py rules), refused before training
    (["model=sgpr", "estimator=bmc", "estimator.num_samples=10"], "estimator=bmc estimates the likelihood term"),
    (["objective=sq_dlm", "estimator=bmc", "estimator.num_samples=10"], "objective=sq_dlm is closed form"),
    (["model=fitc", "objective=dlm"], "model=fitc is collapsed"),
    (["model=sgpr", "objective.beta=0.5"], "model=sgpr is collapsed"),
    (["objective.hyperparameters=fixed"], "applies to objective=dlm or sq_dlm"),
    (["estimator=bmc", "estimator.num_samples=0"], "estimator.num_samples must be an integer >= 1"),
    (["estimator.num_samples=5"], "not estimator=exact"),
    (["model=fitc", "trainer.batch_size=32"], "full-batch method"),
    (["objective=sq_dlm", "model.mean=constant"], "zero mean function"),
    (["model=pac_gp"], "use objective=pac_kl or pac_sqrt"),
    (["objective=pac_kl"], "trains model=pac_gp or pac_sgp"),
    (["model=pac_gp", "objective=pac_kl", "pac.epsilon=0"], "pac.epsilon must be"),
    (["model=pac_gp", "objective=pac_kl", "pac.delta=2"], "pac.delta must be in"),
    (["model=exact_gp", "objective=dlm"], "model=exact_gp trains its own objective"),
]

CONFIG_ROWS = (
    [Row(f"domain_{k}={v}", ["run", f"{k}={v}", *tiny_without(k)], 2, (k, words) if not k.startswith("seed") else (words,))
     for k, v, words in DOMAIN]
    + [Row(f"type_{k}={v}", ["run", f"{k}={v}", *tiny_without(k)], 2, (words,)) for k, v, words in TYPES]
    + [Row("unknown_" + "_".join(ov), ["run", *ov, *TINY], 2, (words,)) for ov, words in UNKNOWN]
    + [Row("combination_" + "_".join(ov), ["run", *ov, *TINY], 2, (words,)) for ov, words in COMBINATIONS]
    + [Row(f"own_loop_{ov[1]}", ["run", *ov, R], 2, (words,)) for ov, words in [
        (["model=lgm_glm", "lgm.init_var=-1"], "lgm.init_var must be a finite number > 0"),
        (["model=lgm_glm", "lgm.prior_var=inf"], "lgm.prior_var must be a finite number > 0"),
        (["model=savigp", "savigp.latent_noise=-1"], "savigp.latent_noise must be a finite number > 0"),
        (["model=savigp", "savigp.x_scale=nan"], "savigp.x_scale must be a finite number > 0"),
        (["model=savigp", "savigp.blocks=[]"], "savigp.blocks must name at least one block"),
        (["model=sggpm", "sggpm.max_folds=0"], "sggpm.max_folds must be an integer >= 1"),
    ]]
    + [Row("report_empty_dir", ["report", "{tmp}"], 2, ("no usable run.json",)),
       Row("sweep_unknown_experiment", ["sweep", "experiment=nope", R], 2, ("unknown experiment 'nope'",)),
       Row("sweep_one_run_dir", ["sweep", "seed=0,1", "run_dir={tmp}/one", R], 2, ("would put every grid point",)),
       Row("sweep_first_point_bad", ["sweep", "objective.beta=-1,1", R], 2, ("objective.beta", POSITIVE)),
       Row("fetch_nothing", ["fetch"], 2, ("name datasets to fetch",)),
       Row("fetch_unknown", ["fetch", "nope"], 2, ("unknown dataset 'nope'",)),
       Row("fetch_verify_and_force", ["fetch", "--verify", "--force"], 2, ("use one at a time",))]
)

# settings the chosen model does not read: refused, every one named (validation.check_unused_settings)
UNREAD = "does not read"
UNUSED_ROWS = [Row(f"unread_{'_'.join(ov)}", ["run", *ov, *TINY], code, words) for ov, code, words in [
    (["lgm.init_var=2"], 2, (UNREAD, "lgm.init_var=2.0", "model=lgm_glm|lgm_gp|lgm_sparse")),
    (["savigp.posterior=mog"], 2, (UNREAD, "savigp.posterior=mog", "model=savigp")),
    (["sggpm.folds=3"], 2, (UNREAD, "sggpm.folds=3", "model=sggpm")),
    (["pac.epsilon=0.3"], 2, (UNREAD, "pac.epsilon=0.3", "objective=pac_kl|pac_sqrt or eval.pac=true")),
    (["pac.loss=exp", "sggpm.method=grad_sod"], 2, ("pac.loss=exp", "sggpm.method=grad_sod", "remove them")),
    (["model=sgpr", "savigp.blocks=[mog]"], 2, ("model=sgpr does not read savigp.blocks=['mog']",)),
    (["model=exact_gp", "lgm.optimizer=grad"], 2, ("model=exact_gp does not read lgm.optimizer=grad",)),
    (["model=lgm_glm", "savigp.num_samples=10"], 2, ("model=lgm_glm does not read savigp.num_samples=10",)),
    (["model=lgm_glm", "sggpm.size_index=2"], 2, ("model=lgm_glm does not read sggpm.size_index=2",)),
    (["model=savigp", "lgm.max_iters=3"], 2, ("model=savigp does not read lgm.max_iters=3",)),
    (["model=sggpm", "savigp.lr=0.5"], 2, ("model=sggpm does not read savigp.lr=0.5",)),
    # positive controls: the schema default is not "set"; pac.* is read with the PAC evaluation
    (["savigp.likelihood=gaussian", "lgm.max_iters=500"], 0, ("status=ok",)),
    (["model=sgpr", "eval.pac=true", "pac.epsilon=0.3"], 0, ("status=ok",)),
]] + [Row("sweep_unread_point", ["sweep", "model=svgp,lgm_glm", "lgm.init_var=2", *TINY], 2,
          ("grid point 0 (model=svgp) is invalid", "model=svgp does not read lgm.init_var=2.0", "nothing was run"))]

def _without_tiny_m(args):
    return [a for a in args if a != "model.num_inducing=5"]


# the training size is known after the split: checked right after loading (models/plugin.py check_data)
DATA_SIZE_ROWS = [
    Row("num_inducing_above_n", ["run", "model.num_inducing=5000", *tiny_without("model.num_inducing")], 2,
        ("model.num_inducing=5000 is larger than the training part (339 rows", "set model.num_inducing <= 339")),
    Row("num_inducing_n_plus_1", ["run", "model.num_inducing=340", *tiny_without("model.num_inducing")], 2,
        ("model.num_inducing=340 is larger",)),
    Row("num_inducing_sgpr_above_n", ["run", "model=sgpr", "model.num_inducing=400", *tiny_without("model.num_inducing")],
        2, ("model.num_inducing=400 is larger",)),
    Row("num_inducing_csv_above_n", _without_tiny_m(csv_run("good.csv", "model.num_inducing=28")), 2,
        ("model.num_inducing=28 is larger than the training part (27 rows",)),
    Row("ok_num_inducing_equals_n", _without_tiny_m(csv_run("good.csv", "model.num_inducing=27")), 0, ("status=ok",)),
    Row("ok_num_inducing_exact_gp", ["run", "model=exact_gp", "model.num_inducing=5000", *tiny_without("model.num_inducing")],
        0, ("status=ok",)),
    Row("lgm_num_inducing_above_n", ["run", "model=lgm_sparse", "lgm.num_inducing=100000", R], 2,
        ("lgm.num_inducing=100000 is larger than the 506 rows in use",)),
    Row("lgm_num_inducing_above_subsample", ["run", "model=lgm_sparse", "lgm.subsample=100", "lgm.num_inducing=101", R],
        2, ("lgm.num_inducing=101 is larger than the 100 rows in use", "lgm.subsample")),
    Row("test_size_above_dataset", ["run", "protocol.test_size=100000", *TINY], 2,
        ("protocol.test_size=100000 is larger than dataset 'boston' (506 rows)",)),
    Row("test_size_classification_above_dataset", csv_run("bin01.csv", task="binary") + ["protocol.test_size=41"], 2,
        ("protocol.test_size=41 is larger than dataset",)),
    Row("ok_test_size_cap", ["run", "protocol.test_size=50", *TINY], 0, ("status=ok",)),
]

# issue 58: habits and silent surprises
NON_ASCII = "results_dir={tmp}/Ergebnisse ä ü"
HABIT_ROWS = [
    Row("method_conflicts_objective", ["run", "method=elbo", "objective=dlm", *TINY], 2,
        ("objective=dlm conflicts with method=elbo, which sets objective=elbo",)),
    Row("method_conflicts_estimator", ["run", "method=dlm_bmc10", "estimator=exact", *TINY], 2,
        ("estimator=exact conflicts with method=dlm_bmc10, which sets estimator=bmc10",)),
    Row("ok_method_agrees", ["run", "method=elbo", "objective=elbo", *TINY], 0, ("status=ok",)),
    Row("csv_keys_without_dataset_csv", ["run", "dataset.path={fx}/good.csv", "dataset.target=y", *TINY], 2,
        ("dataset.path, dataset.target are read only with dataset=csv", "'boston'", "add dataset=csv")),
    Row("csv_task_without_dataset_csv", ["run", "dataset=twonorm", "dataset.task=binary", *TINY], 2,
        ("dataset.task is read only with dataset=csv",)),
    Row("twonorm_regression_protocol", ["run", "dataset=twonorm", "protocol=dlm_regression", *TINY], 2,
        ("protocol=dlm_regression is the regression split, but dataset 'twonorm' is a binary task",)),
    Row("twonorm_song_protocol", ["run", "dataset=twonorm", "protocol=dlm_song", *TINY], 2,
        ("protocol=dlm_song is the regression split",)),
    Row("beta_batch_num_inducing_above_n", ["run", "objective=dlm", "objective.beta_batch=true", "objective.beta_index=0",
                                            "protocol.train_size=200", "model.num_inducing=5000",
                                            *tiny_without("model.num_inducing")], 2,
        ("model.num_inducing=5000 is larger than the training part (200 rows", "set model.num_inducing <= 200")),
    Row("run_dash_m", ["run", "-m", "seed=0", *TINY], 0, ("run -m runs dlm-bench sweep", "1 ok")),
    Row("run_multirun", ["run", "--multirun", "seed=0", *TINY], 0, ("run -m runs dlm-bench sweep", "1 ok")),
    Row("run_comma_list", ["run", "seed=0,1", *TINY], 2,
        ("seed=0,1 is a sweep", "dlm-bench sweep seed=0,1", "dlm-bench run -m seed=0,1"), ("add --multirun",)),
    Row("run_cfg_hydra", ["run", "--cfg", "hydra"], 0, ("hydra:", "sweep:", "hydra.run.dir is not used"),
        ("Error parsing",)),
    Row("run_cfg_all", ["run", "--cfg", "all", *TINY], 0, ("hydra:", "trainer:", "# would write:")),
    Row("run_hydra_run_dir", ["run", "hydra.run.dir={tmp}/x", *TINY], 2,
        ("hydra.run.dir is not read by dlm-bench run", "use run_dir=", "/x (this run's folder)")),
    Row("run_hydra_other_key", ["run", "hydra.job.chdir=true", *TINY], 2, ("hydra.job.chdir is not read",)),
    Row("sweep_hydra_run_dir", ["sweep", "seed=0", "hydra.run.dir={tmp}/x", *TINY], 2,
        ("hydra.run.dir is not read by dlm-bench sweep", "run_dir=")),
    Row("ok_results_dir_non_ascii_spaces", ["run", NON_ASCII, *tiny_without("results_dir")], 0,
        ("status=ok", "Ergebnisse ä ü/default/"), ("LexerNoViableAltException",)),
    Row("ok_sweep_results_dir_non_ascii", ["sweep", "seed=0", NON_ASCII, *tiny_without("results_dir")], 0,
        ("1 ok",), ("LexerNoViableAltException",)),
    Row("ok_line_names_the_iteration_cap", ["run", *TINY], 0, ("converged=False (hit the iteration cap)",)),
    Row("ok_line_names_a_floor", ["run", "model.noise_init=1.00001e-4", *TINY], 0,
        ("at_bound=[likelihood.noise_covar.noise=0.000100001 at its floor 0.0001]",)),
    Row("ok_line_no_floor", ["run", *TINY], 0, ("status=ok",), ("at_bound",)),
]

# issue 27 config items: empty results_dir, interpolations, seeds, sweep points
SEED = "seed must be an integer >= 0 and < 2**63"
MISC_CONFIG_ROWS = [
    Row("results_dir_empty", ["run", "results_dir=", *TINY[:-1]], 2, ("results_dir must name a folder, got ''",)),
    Row("results_dir_blank", ["run", "results_dir= ", *TINY[:-1]], 2, ("results_dir must name a folder",)),
    Row("sweep_results_dir_empty", ["sweep", "seed=0", "results_dir=", *TINY[:-1]], 2, ("results_dir must name a folder",)),
    Row("interpolation_missing_key", ["run", "trainer.lr=${nope}", *TINY], 2,
        ("cannot resolve trainer.lr", "Interpolation key 'nope' not found")),
    Row("interpolation_missing_env", ["run", "trainer.lr=${oc.env:DLM_BENCH_NO_SUCH_VAR}", *TINY], 2,
        ("cannot resolve trainer.lr", "DLM_BENCH_NO_SUCH_VAR")),
    Row("interpolation_nested_key", ["run", "objective.beta=${trainer.nope}", *TINY], 2, ("cannot resolve objective.beta",)),
    Row("interpolation_in_sweep", ["sweep", "--dry-run", "seed=0", "trainer.lr=${nope}", R], 2, ("INVALID", "nope")),
    Row("interpolation_bad_resolver", ["run", "trainer.lr=${nope:1}", *TINY], 2, ("nope",)),
    Row("seed_overflow", ["run", "seed=99999999999999999999", *TINY], 2, (SEED, "99999999999999999999")),
    Row("seed_arabic_indic_digit", ["run", "seed=\u0663", *TINY], 2,
        ("seed='\u0663' writes a number with digits other than 0-9", "write it as seed=3")),
    Row("lr_arabic_indic_digits", ["run", "trainer.lr=\u0660.\u0661", *TINY], 2,
        ("digits other than 0-9", "trainer.lr=0.1")),
    Row("sweep_seed_arabic_indic_digit", ["sweep", "seed=0,\u0663", *TINY], 2, ("seed", "could not be converted")),
    Row("ok_non_ascii_digit_in_a_path", ["run", "results_dir={tmp}/res\u0663", "trainer.max_iters=2",
                                         "trainer.progress=off", "model.num_inducing=5"], 0, ("status=ok",)),
    Row("seed_2_pow_63", ["run", "seed=9223372036854775808", *TINY], 2, (SEED,)),
    Row("sweep_seed_overflow", ["sweep", "seed=0,99999999999999999999", *TINY], 2,
        ("grid point 1 (seed=99999999999999999999) is invalid", SEED)),
    Row("sweep_middle_point_bad", ["sweep", "objective=dlm", "objective.beta=1,-1,0.5", *TINY], 2,
        ("grid point 1 (objective.beta=-1) is invalid", POSITIVE, "nothing was run")),
    Row("sweep_last_point_bad", ["sweep", "trainer.lr=0.1,0.01,nan", *TINY], 2,
        ("grid point 2 (trainer.lr=nan) is invalid", "trainer.lr", POSITIVE)),
    Row("sweep_dry_run_nan", ["sweep", "--dry-run", "objective.beta=1,nan", *TINY], 2,
        ("INVALID: objective.beta must be a finite number > 0, got nan", "1 new, 1 invalid")),
]

# every bad savigp.* value (and lgm.likelihood): one line, exit 2, before any data is read. The lgm.* and sggpm.*
# ranges are field metadata with one row per bound in tests/unit/config/test_paper_section_domains.py
OWN_LOOP = [
    ("lgm_glm", "lgm.likelihood=nope", "lgm.likelihood"),
    *[("savigp", f"savigp.{k}={v}", f"savigp.{k}") for k, v in [
        ("posterior", "nope"), ("components", "0"), ("components", "100000"), ("estimator", "nope"),
        ("num_samples", "0"), ("num_samples", "1000000000"), ("cv_samples", "0"), ("cv_samples", "-1"),
        ("sample_seed", "-1"), ("entropy", "nope"), ("sparsity_factor", "0"), ("sparsity_factor", "nan"),
        ("sparsity_factor", "2"), ("num_inducing", "0"), ("inducing", "nope"), ("likelihood", "nope"),
        ("offset", "nan"), ("offset", "-1"), ("transform", "nope"), ("x_scale", "0"), ("x_scale", "inf"),
        ("latent_noise", "nan"), ("lengthscale_init", "0"), ("variance_init", "inf"), ("noise_init", "-1"),
        ("optimizer", "nope"), ("lr", "0"), ("lr", "nan"), ("blocks", "[nope]"), ("evals_mog", "0"),
        ("evals_hyp", "-1"), ("evals_ll", "0"), ("evals_inducing", "0"), ("max_iter", "0"), ("xtol", "nan"),
        ("xtol", "-1"), ("ftol", "nan"), ("ftol", "inf"), ("max_wall_s", "-1"), ("max_wall_s", "nan"), ("pred_samples", "0"), ("pred_samples", "-1"),
        ("pred_samples", "1000000000")]],
    ("savigp", "savigp.posterior=mog savigp.components=100000", "savigp.components"),
    ("savigp", "savigp.entropy=exact savigp.posterior=mog", "savigp.entropy"),
]
OWN_LOOP_ROWS = [Row(f"own_loop_{model}_{ov.replace(' ', '_')}", ["run", f"model={model}", *ov.split(), R], 2, (key,))
                 for model, ov, key in OWN_LOOP] + [
    # needs the data: more folds than rows left for testing (sggpm check_data), a 40-row count table
    Row("own_loop_sggpm_folds_above_rows", csv_run("count_ok.csv", "model=sggpm", "sggpm.size_index=9",
                                                   "sggpm.folds=60", task="count"), 2,
        ("sggpm.folds=60 is more than the 20 rows left for testing",)),
]

SKIPPED = "skipped 1 unusable run.json"
REPORT = ["report", "{tmp}/res", "--out", "{tmp}/out"]
MISTYPED = [  # one run.json of three with a field of the wrong type: skipped, listed with its reason
    ({"seed": "abc"}, "seed is 'abc', not an integer"),
    ({"seed": 1.5}, "seed is 1.5, not an integer"),
    ({"seed": True}, "seed is True, not an integer"),
    ({"metrics": "x"}, "metrics is 'x', not an object"),
    ({"metrics": [1, 2]}, "metrics is [1, 2], not an object"),
    ({"metrics": {"test_nll": "low"}}, "metric test_nll is 'low', not a number"),
    ({"status": 123}, "status is 123, not a string"),
    ({"status": "great"}, "status is 'great', not one of ok, failed, diverged"),
    ({"schema": "1"}, "schema is '1', not an integer"),
    ({"beta": "x"}, "beta is 'x', not a number"),
    ({"train_size": "100"}, "train_size is '100', not an integer"),
    ({"num_inducing": 1.5}, "num_inducing is 1.5, not an integer"),
    ({"train": []}, "train is [], not an object"),
    ({"config": "cfg"}, "config is 'cfg', not an object"),
    ({"env": 3}, "env is 3, not an object"),
    ({"error": 5}, "error is 5, not a string"),
    ({"model": 7}, "model is 7, not a string"),
    ({"experiment": ["e"]}, "experiment is ['e'], not a string"),
    ({"dataset": None}, "missing dataset"),
]
REPORT_ROWS = (
    [Row(f"report_{list(f)[0]}={json.dumps(list(f.values())[0])}", REPORT, 0, ("report: 2 runs", SKIPPED, why),
         ("internal error",), bad_run(**f)) for f, why in MISTYPED]
    + [Row(f"report_text_{i}", REPORT, 0, ("report: 2 runs", SKIPPED, why), setup=bad_run_text(text))
       for i, (text, why) in enumerate([('{"seed": ', "not valid JSON"), ("[]", "not a JSON object (list)"),
                                        ("null", "not a JSON object (NoneType)"), ("{}", "empty record"),
                                        ('"text"', "not a JSON object (str)")])]
    + [Row(f"report_without_{k}", REPORT, 0, (SKIPPED, f"missing {k}"), setup=dropped_field(k))
       for k in ("status", "seed", "model")]
    + [Row("report_fifo_run_json", REPORT, 0, (SKIPPED, "not a regular file"), setup=fifo_run)]
    # within the contract (config is free-form), but the report reads config.estimator.num_samples: a string there
    # was an internal error (AttributeError) before 2026-12-07
    + [Row("report_config_estimator_not_a_mapping", REPORT, 0, ("report: 3 runs",), ("internal error", "skipped"),
           bad_run(config={"model": {"name": "svgp"}, "estimator": "bmc"}))]
    + [Row(f"report_curve_{name}", REPORT, 0, ("report: 2 runs", "Skipped curve.csv files", why), ("KeyError",),
           curve_runs(text)) for name, text, why in [
        ("no_iteration", "wall_s,loss,test_nll\n0.1,3,0.9\n", "no 'iteration' column"),
        ("ragged", "iteration,wall_s,loss,test_nll\n1,0.1\n", "line 2 has 2 fields, the header 4"),
        ("text_index", "iteration,wall_s,loss,test_nll\none,0.1,3,0.9\n", "iteration is 'one', not a number"),
        ("empty", "", "empty file (no header)"),
        ("duplicate", "iteration,loss,loss\n1,2,3\n", "duplicate column(s) loss"),
    ]]
    # a curve.csv within the contract whose metric values are text: kept, nothing to draw (was KeyError: 'iteration')
    + [Row("report_curve_text_values", REPORT, 0, ("report: 2 runs (2 ok)",),
           ("KeyError", "Skipped curve.csv files\n\n(their runs are in the tables; their curves are not drawn)\n\n-"),
           curve_runs(TEXT_CURVE, TEXT_CURVE)),
       Row("report_run_json_nested_100000_deep", REPORT, 0, ("report: 2 runs", SKIPPED, "nested too deeply"),
           setup=bad_run_text("[" * 100_000 + "]" * 100_000))]
    + [Row("report_no_usable_run", REPORT, 2, ("no usable run.json", "seed is 'abc'"), setup=only_bad),
       Row("report_no_such_dir", ["report", "{tmp}/nope"], 2, ("no such results directory",)),
       Row("report_dev_zero", ["report", "/dev/zero"], 2, ("/dev/zero is not a results directory",)),
       Row("report_out_is_file", ["report", "{tmp}/res", "--out", "{tmp}/taken"], 2,
           ("cannot write the report", "it is a file, not a folder"), setup=out_is_file),
       Row("report_out_under_dev_null", ["report", "{tmp}/res", "--out", "/dev/null/report"], 2,
           ("cannot write the report to /dev/null/report",), setup=two_good_runs),
       Row("report_out_in_proc", ["report", "{tmp}/res", "--out", "/proc/no/report"], 2,
           ("cannot write the report to /proc/no/report",), setup=two_good_runs),
       Row("report_paper_absent", ["report", "{tmp}/res", "--out", "{tmp}/out", "--paper", "pac"], 2,
           ("no runs of paper 'pac'",), setup=two_good_runs),
       Row("report_ok_control", REPORT, 0, ("report: 2 runs",), ("skipped",), two_good_runs)]
)

DRY = ["sweep", "--dry-run", "seed=0", R]
LOCK_ROWS = [
    Row("lock_live_holder", DRY, 0, ("1 running elsewhere",), ("1 new",), lock()),
    Row("lock_reused_pid", DRY, 0, ("1 new",), ("running elsewhere",), lock(start=1)),
    Row("lock_before_reboot", DRY, 0, ("1 new",), ("running elsewhere",), lock(boot="00000000-old-boot")),
    Row("lock_old_format_live", DRY, 0, ("1 running elsewhere",), ("1 new",), lock(start=None, boot=None)),
    Row("lock_old_format_dead", DRY, 0, ("1 new",), ("running elsewhere",), lock(pid="dead", start=None, boot=None)),
    Row("lock_dead_pid", DRY, 0, ("1 new",), ("running elsewhere",), lock(pid="dead")),
    Row("lock_other_host", DRY, 0, ("1 running elsewhere",), ("1 new",), lock(host="another-node")),
    Row("lock_garbled_fresh", DRY, 0, ("1 running elsewhere",), ("1 new",), garbled_lock(0)),
    Row("lock_garbled_old", DRY, 0, ("1 new",), ("running elsewhere",), garbled_lock(60)),
]

# errors of the machine, not of a point (issues 54, 58): exit 2 before any job, nothing written (before, each was a
# failed run.json per point that every later sweep skipped). No network: downloads go to a proxy port that refuses.
OFFLINE = {"DLM_BENCH_MIRROR": "", "DLM_BENCH_DATA": "{tmp}/cache", "https_proxy": "http://127.0.0.1:{refused}",
           "http_proxy": "http://127.0.0.1:{refused}", "HTTPS_PROXY": "http://127.0.0.1:{refused}",
           "HTTP_PROXY": "http://127.0.0.1:{refused}", "no_proxy": "", "NO_PROXY": ""}
SWEEP = ["sweep", "seed=0", *TINY]
MACHINE_ROWS = [
    Row("sweep_heartbeat_not_a_number", SWEEP, 2, ("DLM_BENCH_HEARTBEAT_S", "'abc'", "nothing was run"),
        env={"DLM_BENCH_HEARTBEAT_S": "abc"}),
    Row("sweep_pretrain_wait_not_a_number", SWEEP, 2, ("DLM_BENCH_PRETRAIN_WAIT_S='abc'", "nothing was run"),
        env={"DLM_BENCH_PRETRAIN_WAIT_S": "abc"}),
    # issue 75: `run` exited 1 with a failed run.json where `sweep` refused up front
    Row("run_pretrain_wait_not_a_number", ["run", "objective=dlm", "objective.hyperparameters=fixed", *TINY], 2,
        ("DLM_BENCH_PRETRAIN_WAIT_S='abc' is not a number of seconds",), env={"DLM_BENCH_PRETRAIN_WAIT_S": "abc"}),
    Row("run_heartbeat_not_a_number", ["run", *TINY], 2, ("DLM_BENCH_HEARTBEAT_S", "'abc'"),
        env={"DLM_BENCH_HEARTBEAT_S": "abc"}),
    # issue 75: a dry run lists the points where sbatch is missing (they are submitted on the cluster)
    Row("ok_sweep_dry_run_slurm_not_here", ["sweep", "--dry-run", "seed=0,1", "launcher=slurm", *TINY], 0,
        ("2 new", "sbatch is not on PATH here"), ("error",), env={"PATH": os.path.dirname(sys.executable)}),
    Row("sweep_device_cuda_without_cuda", [*SWEEP, "device=cuda"], 2, ("device=cuda", "no CUDA device"),
        env={"CUDA_VISIBLE_DEVICES": ""}),
    Row("sweep_csv_good_then_garbage", ["sweep", "dataset=csv", "dataset.path={fx}/good.csv,{fx}/garbage.csv",
                                        "dataset.target=y", "dataset.task=regression", *TINY], 2,
        ("grid point 1", "garbage.csv", "nothing was run")),
    Row("sweep_slurm_not_here", [*SWEEP, "launcher=slurm"], 2, ("launcher=slurm", "sbatch is not on PATH"),
        ("srun",), env={"PATH": os.path.dirname(sys.executable)}),
    Row("sweep_time_limit_negative", ["sweep", "--time-limit", "-5m", *SWEEP[1:]], 2,
        ("--time-limit '-5m' must be a finite duration > 0",), ("usage",)),
    # issue 75: accepted, then every point failed with "OverflowError: timestamp out of range"
    *[Row(f"sweep_time_limit_{v}", ["sweep", "--time-limit", v, *SWEEP[1:]], 2,
          (f"--time-limit '{v}' is longer than a year (366d)",), ("OverflowError",)) for v in ("1e300", "1e10", "367d")],
    Row("sweep_data_offline", [*SWEEP, "dataset=creep"], 2,
        ("needs dataset creep", "no connection", "DLM_BENCH_MIRROR", "dlm-bench fetch creep", "nothing was run"),
        env=OFFLINE),
    Row("sweep_dry_run_data_offline", ["sweep", "--dry-run", "dataset=creep", "seed=0,1", *TINY], 2,
        ("DATA UNAVAILABLE", "2 without data"), env=OFFLINE),
    Row("sweep_data_from_mirror_control", ["sweep", "--estimate", "dataset=creep", "seed=0", *TINY], 0,
        ("1 new",), ("DATA UNAVAILABLE",), env={**OFFLINE, "DLM_BENCH_MIRROR": "/work/shared/data"}),
]

ROWS = (DATA_ROWS + CONFIG_ROWS + UNUSED_ROWS + DATA_SIZE_ROWS + HABIT_ROWS + MISC_CONFIG_ROWS + OWN_LOOP_ROWS
        + REPORT_ROWS + LOCK_ROWS + MACHINE_ROWS)


def test_the_table_is_large_and_its_ids_unique():
    assert len(ROWS) >= 150
    assert len({r.id for r in ROWS}) == len(ROWS)


@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    d = tmp_path_factory.mktemp("tables")
    make_tables(d)
    return d


@pytest.fixture(scope="module")
def sleeper():
    """A live process other than this one, named by the lock rows."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield p.pid
    p.kill()
    p.wait()


def _alarm(signum, frame):
    raise TimeoutError(f"hung for {HANG_LIMIT_S} s")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_hostile_input(row, fx, sleeper, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may land in the working directory either
    ctx = {"tmp": tmp_path, "fx": fx, "sleeper": sleeper}
    if row.env:
        if any("/work/shared/data" in v for v in row.env.values()) and not Path("/work/shared/data").is_dir():
            pytest.skip("the offline data mirror /work/shared/data is absent")
        with socket.socket() as s:  # a port nothing listens on: connections to it are refused
            s.bind(("127.0.0.1", 0))
            refused = s.getsockname()[1]
        for k, v in row.env.items():
            monkeypatch.setenv(k, v.replace("{tmp}", str(tmp_path)).replace("{refused}", str(refused)))
    if row.setup is not None:
        row.setup(ctx)
    args = [a.replace("{tmp}", str(tmp_path)).replace("{fx}", str(ctx["fx"])) for a in row.args]
    before = set(tmp_path.rglob("*"))
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_LIMIT_S)
    try:
        code = main(args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    out = capsys.readouterr()
    text = out.out + out.err
    index = tmp_path / "out" / "index.md"
    if args[0] == "report" and index.is_file():
        text += index.read_text()
    assert code == row.code, text
    for w in row.words:
        assert w in text, f"{w!r} not in:\n{text}"
    for w in row.absent:
        assert w not in text, f"{w!r} in:\n{text}"
    assert "Traceback" not in text and "internal error" not in text, text
    if row.code == 0 and args[0] == "run" and "--cfg" not in args:  # what it wrote passes the report's checks
        (written,) = tmp_path.rglob("run.json")
        rec = json.loads(written.read_text())
        assert check_run_record(rec) is None and rec["status"] == "ok"
        assert check_curve_csv(written.parent / "curve.csv", rec["model"]) is None
    if args[0] == "report" and row.code == 2:  # a report that stopped leaves no empty folder it made
        assert not [p for p in set(tmp_path.rglob("*")) - before if p.is_dir() and not any(p.iterdir())]
    if row.code == 2:
        lines = out.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dlm-bench: error: "), out.err
        if args[0] == "run":
            assert not list(tmp_path.rglob("run.json")), "refused, but a run was written"
            assert not list(tmp_path.rglob("curve.csv"))
            # issue 58: nothing else either (an empty <results_dir>/default/ was left behind)
            assert set(tmp_path.rglob("*")) <= before, f"a refused run left {set(tmp_path.rglob('*')) - before}"
        if args[0] == "sweep":
            assert set(tmp_path.rglob("*")) <= before | {tmp_path / "res"}, "a refused sweep wrote files"


def test_ctrl_c_on_a_joblib_sweep_prints_one_line(tmp_path):
    """Issue 58: Ctrl-C (SIGINT to the terminal's process group) on a joblib sweep printed `dlm-bench: interrupted`,
    then loky's resource-tracker leak warning and two `KeyError: '/loky-...'` tracebacks (the parent had killed the
    trackers). Now: that one line, exit 130, no worker left behind."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "dlm_bench.cli", "sweep", "trainer.max_iters=100000", "model.num_inducing=10",
           "seed=0,1", "launcher=joblib", f"results_dir={tmp_path}"]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(list(tmp_path.rglob(LOCK_NAME))) < 2 and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.5)  # both jobs hold their run lock: they are training in loky workers
    time.sleep(2)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=90)
    lines = [ln for ln in err.splitlines() if "[HYDRA]" not in ln and not ln.startswith("sweep: ")]  # progress lines
    assert p.returncode == 130 and lines == ["dlm-bench: interrupted"], err
    for _ in range(40):  # the resource trackers exit once they see their pipe to the sweep close
        left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
        if not left:
            break
        time.sleep(0.5)
    assert left == [], f"processes left in the sweep's group: {left}"


def test_binary_csv_gets_its_split_and_label_map(fx, tmp_path, capsys):
    """issue 58: a binary CSV run without a protocol is split by the classification protocol (10 % validation, up
    to 1000 test rows, 25 % of all rows on a small table; its sizes re-derived here), and run.json records the yes/no -> 1/0 mapping the labels got;
    the record stays within the results contract."""
    code = main(["run", "dataset=csv", f"dataset.path={fx}/yesno_big.csv", "dataset.target=y", "dataset.task=binary",
                 *[a.replace("{tmp}", str(tmp_path)) for a in TINY]])
    assert code == 0, capsys.readouterr()
    (written,) = tmp_path.rglob("run.json")
    rec = json.loads(written.read_text())
    assert check_run_record(rec) is None
    assert rec["config"]["protocol"]["name"] == "dlm_classification"
    # issue 75: 1000 test rows would outnumber the 80 left to train on: the test part is 25 % of all rows instead
    assert rec["split"] == "dlm_classification_test25"
    n_val = round(0.1 * 1200)
    assert rec["train_size"] == 1200 - n_val - 300  # train = the rest after validation and 300 test rows
    assert rec["label_map"] == {"no": 0.0, "yes": 1.0}
    assert rec["train"]["stopped"] == "iteration_cap"


def test_label_map_of_pm1_and_none_for_numbers(fx, tmp_path):
    """-1/1 labels are recorded as mapped to 0/1; 0/1 labels and regression targets have no map (null)."""
    from dlm_bench.data.user import load_user_table
    from types import SimpleNamespace

    cfg = lambda f, task: SimpleNamespace(path=str(fx / f), target="y", task=task, categorical=None)  # noqa: E731
    assert load_user_table(cfg("binpm.csv", "binary")).label_map == {"-1": 0.0, "1": 1.0}
    assert load_user_table(cfg("bin01.csv", "binary")).label_map is None
    assert load_user_table(cfg("good.csv", "regression")).label_map is None
    assert load_user_table(cfg("bin_truefalse_text.csv", "binary")).label_map == {"False": 0.0, "True": 1.0}


def test_shell_completion_lists_groups_options_and_keys():
    """argcomplete (the real library, as the shell calls it): the commands, a group's options, config keys."""
    env = {**os.environ, "_ARGCOMPLETE": "1", "_ARGCOMPLETE_IFS": "\n"}
    got = {}
    for line in ("dlm-bench sw", "dlm-bench run model=sg", "dlm-bench sweep trainer.max"):
        with open(os.devnull, "w") as null:
            out_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"dlm-bench-complete-{os.getpid()}"
            subprocess.run([sys.executable, "-m", "dlm_bench.cli"], env={**env, "COMP_LINE": line,
                           "COMP_POINT": str(len(line)), "_ARGCOMPLETE_STDOUT_FILENAME": str(out_file)},
                           stderr=null, timeout=120, check=False)
            got[line] = {c.strip() for c in out_file.read_text().split("\n")} - {""}
            out_file.unlink()
    assert got["dlm-bench sw"] == {"sweep"}
    assert got["dlm-bench run model=sg"] == {"model=sggpm", "model=sgpr"}  # the files in conf/model/
    assert got["dlm-bench sweep trainer.max"] == {"trainer.max_iters="}


def test_interrupted_run_leaves_no_empty_run_dir(tmp_path):
    """issue 58: Ctrl-C (SIGINT) during training: exit 130, one line, and no empty run directory or results_dir."""
    res = tmp_path / "res"
    p = subprocess.Popen([sys.executable, "-m", "dlm_bench.cli", "run", f"results_dir={res}", "trainer.max_iters=1000000",
                          "trainer.tol=-1", "trainer.progress=off", "model.num_inducing=5"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         # a test started in the background inherits an ignored SIGINT: Ctrl-C as in a terminal
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 120
    while not list(res.glob("default/*")) and time.time() < deadline:  # the run dir exists once training starts
        time.sleep(0.2)
    assert list(res.glob("default/*")), "the run never started"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    # 130 (our exit) or death by SIGINT itself (seen once on a machine at load 4+, after the one line was printed):
    # both are the Ctrl-C exit a shell reports as 130
    assert p.returncode in (130, -signal.SIGINT), err
    assert err.strip().splitlines()[-1] == "dlm-bench: interrupted", err
    assert not res.exists(), list(res.rglob("*"))


@pytest.mark.parametrize("task", ["binary", "count"])
def test_small_classification_csv_scales_its_test_part(tmp_path, capsys, task):
    """issue 75: a valid 300-row binary or count CSV was refused ("leaves 1 train row(s) ... 1/30/269": the test part
    took up to 1000 rows first). Now the test part is 25 % of all rows and run.json's split says so; sizes by hand:
    val = 10 % of 300 = 30, test = 25 % of 300 = 75, train = the other 195."""
    rng = np.random.default_rng(5)
    df = _regression(n=300, seed=5)
    df["y"] = (df["a"] > 0).astype(int) if task == "binary" else rng.poisson(np.exp(0.5 * df["a"]))
    path = tmp_path / f"{task}300.csv"
    path.write_text(_csv(df))
    code = main(["run", "dataset=csv", f"dataset.path={path}", "dataset.target=y", f"dataset.task={task}",
                 *[a.replace("{tmp}", str(tmp_path)) for a in TINY]])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    (written,) = tmp_path.rglob("run.json")
    rec = json.loads(written.read_text())
    assert check_run_record(rec) is None and rec["status"] == "ok"
    assert rec["split"] == "dlm_classification_test25" and rec["train_size"] == 195


def test_registered_classification_split_keeps_its_1000_test_rows():
    """The scaling is for small tables only: thyroid's 3772 rows keep 377 validation and 1000 test rows."""
    from dlm_bench.data.protocols import dlm_classification_split

    s = dlm_classification_split(3772, 0)
    assert (len(s.val), len(s.test), s.name) == (377, 1000, None)
    assert len(dlm_classification_split(3772, 0, train_size=None).train) == 3772 - 377 - 1000


# --- checkpoints that are not this run's (issue 75) --------------------------------------------------------------

CKPT = ["trainer.max_iters=15", "trainer.progress=off", "trainer.checkpoint_every_s=1e-9", "dtype=float64"]


def _ckpt_run(tmp_path, capsys, *extra, keep_checkpoint=None):
    """`dlm-bench run` in-process; keep_checkpoint: a monkeypatch that leaves the run's last checkpoint in place
    (a donor for another run's folder). Returns (exit code, run.json, stderr, run dir)."""
    from dlm_bench.run.naming import run_dir_for

    args = [*CKPT, f"results_dir={tmp_path}", *extra]
    run_dir = run_dir_for(compose_config(args))
    if keep_checkpoint is not None:
        keep_checkpoint.setattr("dlm_bench.run.record.remove_checkpoints", lambda d: None)
    code = main(["run", *args])
    if keep_checkpoint is not None:
        keep_checkpoint.undo()
    out = capsys.readouterr()
    return code, json.loads((run_dir / "run.json").read_text()), out.err, run_dir


@pytest.fixture(scope="module")
def ckpt_reference(tmp_path_factory):
    """The uninterrupted run (seed 0, M = 50) every case below must reproduce exactly."""
    tmp = tmp_path_factory.mktemp("ckpt_ref")
    code = main(["run", *CKPT, f"results_dir={tmp}", "seed=0", "model.num_inducing=50"])
    assert code == 0
    (rec,) = [json.loads(p.read_text()) for p in tmp.rglob("run.json")]
    return rec


def _legacy(path: Path) -> None:
    """The checkpoint as written before identities were recorded (no run, no config): only its shape can tell."""
    import torch

    state = torch.load(path, weights_only=False)
    state["identity"] = {}
    torch.save(state, path)


@pytest.mark.parametrize("case", ["other_seed", "other_m", "other_m_legacy", "bare_tensor", "garbage"])
def test_a_checkpoint_not_of_this_run_is_ignored_in_one_line(case, tmp_path, capsys, monkeypatch, ckpt_reference):
    """Issue 75: seed 1's checkpoint in seed 0's folder was resumed silently (test_nll 0.3184 against 0.3115); an M = 20
    checkpoint in an M = 50 run, or a file holding a bare tensor, failed the run with an 8-line state_dict error and a
    failed run.json. Now each is ignored with one line and the run ends exactly as the uninterrupted run."""
    import torch

    target = ["seed=0", "model.num_inducing=50"]
    donor = {"other_seed": ["seed=1", "model.num_inducing=50"], "other_m": ["seed=0", "model.num_inducing=20"],
             "other_m_legacy": ["seed=0", "model.num_inducing=20"]}.get(case)
    from dlm_bench.run.naming import run_dir_for

    place = run_dir_for(compose_config([*CKPT, f"results_dir={tmp_path}/target", *target])) / "checkpoint.pt"
    place.parent.mkdir(parents=True)
    if donor is not None:
        code, rec, _, d = _ckpt_run(tmp_path / "donor", capsys, *donor, keep_checkpoint=monkeypatch)
        assert code == 0 and rec["metrics"] != ckpt_reference["metrics"]  # resuming it would change the result
        (d / "checkpoint.pt").rename(place)
        if case == "other_m_legacy":
            _legacy(place)
    elif case == "bare_tensor":
        torch.save(torch.zeros(3), place)
    else:
        place.write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 3000, dtype=np.uint8)))
    code, rec, err, _ = _ckpt_run(tmp_path / "target", capsys, *target)
    lines = err.strip().splitlines()
    assert code == 0 and rec["status"] == "ok", err
    assert len(lines) == 1 and lines[0].startswith(f"dlm-bench: ignoring checkpoint {place}: "), err
    assert lines[0].endswith("training starts over"), err
    assert {"other_seed": "belongs to run boston_svgp_elbo_beta1_seed1_", "other_m": "belongs to run",
            "other_m_legacy": "does not fit this model", "bare_tensor": "holds a Tensor",
            "garbage": "does not load"}[case] in lines[0], err
    assert rec["metrics"] == ckpt_reference["metrics"]  # every digit: as if uninterrupted
    assert "resumed_at" not in rec["train"]


# --- mirrors that misbehave (issue 75) ----------------------------------------------------------------------------


def _serve(handler_cls):
    """An HTTP server on 127.0.0.1 in a thread; returns (server, base URL)."""
    import threading
    from http.server import ThreadingHTTPServer

    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _mirror_env(monkeypatch, tmp_path, url):
    for k in ("https_proxy", "http_proxy", "HTTPS_PROXY", "HTTP_PROXY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("DLM_BENCH_MIRROR", url)
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))


@pytest.mark.parametrize("get_works", [True, False])
def test_a_mirror_that_refuses_head_but_serves_get(get_works, tmp_path, capsys, monkeypatch):
    """A mirror answering HEAD with 501 but serving GET made `sweep` refuse the dataset ("cannot reach ... HTTP
    501") while `fetch` worked. The probe now asks with a ranged GET and takes the size from Content-Range;
    a mirror that refuses GET as well is still unavailable (the control)."""
    from http.server import BaseHTTPRequestHandler

    body = b"0123456789" * 100
    asked = []

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self):
            asked.append("HEAD")
            self.send_error(501)

        def do_GET(self):
            asked.append(("GET", self.headers.get("Range")))
            if not get_works:
                self.send_error(501)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes 0-0/{len(body)}")
            self.send_header("Content-Length", "1")
            self.end_headers()
            self.wfile.write(body[:1])

        def log_message(self, *a):
            pass

    server, url = _serve(Handler)
    try:
        _mirror_env(monkeypatch, tmp_path, url)
        from dlm_bench.data.availability import locate

        a = locate("creep", probe=True)
        code = main(["sweep", "--estimate", "dataset=creep", "seed=0", *[t.replace("{tmp}", str(tmp_path)) for t in TINY]])
    finally:
        server.shutdown()
        server.server_close()
    out = capsys.readouterr()
    assert asked[:2] == ["HEAD", ("GET", "bytes=0-0")]
    if get_works:
        assert a.state != "unavailable" and a.nbytes == len(body), a
        assert code == 0 and "1 new" in out.out and "DATA UNAVAILABLE" not in out.out + out.err, out
    else:
        assert a.state == "unavailable" and "HTTP 501 to HEAD, HTTP 501 to GET" in a.reason, a
        assert code == 2 and len(out.err.strip().splitlines()) == 1, out


def test_a_mirror_that_never_answers_is_named_and_given_up_on_soon(tmp_path, capsys, monkeypatch):
    """A mirror that accepts the connection and never answers kept `fetch` silent for 186 s (60 s read timeout x 3).
    Now a line names what it waits for after WAIT_NOTE_S, and each attempt gives up on the first byte after
    DLM_BENCH_FETCH_TIMEOUT_S (lowered here: 0.5 s, so 3 attempts + 1.5 s of backoff stay a few seconds)."""
    import importlib
    import threading

    fetch_mod = importlib.import_module("dlm_bench.data.fetch")  # the module (dlm_bench.data.fetch is also a function)

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held, stop = [], threading.Event()

    def accept():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])  # accepted, never answered
            except OSError:
                pass

    threading.Thread(target=accept, daemon=True).start()
    _mirror_env(monkeypatch, tmp_path, f"http://127.0.0.1:{listener.getsockname()[1]}")
    monkeypatch.setenv("DLM_BENCH_FETCH_TIMEOUT_S", "0.5")
    monkeypatch.setattr(fetch_mod, "WAIT_NOTE_S", 0.2)
    t0 = time.monotonic()
    try:
        code = main(["fetch", "creep"])
    finally:
        stop.set()
        for s in held:
            s.close()
        listener.close()
    wall = time.monotonic() - t0
    err = capsys.readouterr().err
    assert code != 0 and wall < 15, (code, wall, err)
    assert "fetch: waiting for 127.0.0.1:" in err, err
    assert "giving up after 0.5 s (attempt 1 of 3)" in err, err
    assert "timed out, 3 attempts" in err, err
    assert "Traceback" not in err


# --- a cached file the user may not read (issue 75) -----------------------------------------------------------

MIRROR = Path("/work/shared/data")


def _cache_creep(tmp_path, monkeypatch) -> Path:
    """creep fetched from the offline mirror into a fresh cache, then chmod 000 (which changes its ctime: the
    cache's quick check then re-hashes it). Returns the cached file."""
    if not (MIRROR / "creep").is_dir():
        pytest.skip("the offline data mirror /work/shared/data is absent")
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(MIRROR))
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    assert main(["fetch", "creep"]) == 0
    (cached,) = [p for p in (tmp_path / "cache" / "creep").rglob("creep.data")]
    os.chmod(cached, 0)
    return cached


def _unreadable_run(tmp_path, capsys, cached):
    code = main(["run", "dataset=creep", *[a.replace("{tmp}", str(tmp_path)) for a in TINY]])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.strip().splitlines() == [
        f"dlm-bench: error: cannot read the cached file {cached} (Permission denied); make it readable (chmod u+r) "
        "or re-fetch it with: dlm-bench fetch creep --force"], err
    assert not list(tmp_path.rglob("run.json"))


def test_a_cached_file_of_mode_000_is_one_line_naming_it(tmp_path, capsys, monkeypatch):
    """Was "internal error: PermissionError". Tests run as root, which reads a mode-000 file anyway: the denial
    is what open() raises for a non-root user, put in by a monkeypatch on the file's own path."""
    import builtins

    cached = _cache_creep(tmp_path, monkeypatch)
    capsys.readouterr()
    real_open = builtins.open

    def denied(file, *a, **k):
        if isinstance(file, (str, os.PathLike)) and Path(file) == cached and not os.stat(cached).st_mode & 0o777:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", denied)
    _unreadable_run(tmp_path, capsys, cached)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file; the monkeypatched test above covers root")
def test_a_cached_file_of_mode_000_for_a_real_user(tmp_path, capsys, monkeypatch):
    cached = _cache_creep(tmp_path, monkeypatch)
    capsys.readouterr()
    _unreadable_run(tmp_path, capsys, cached)


def test_a_configuration_error_of_every_point_is_said_once_as_such(tmp_path, capsys, monkeypatch):
    """Issue 75: a batched beta sweep with model.num_inducing=5000 on 200 rows printed the ConfigError once per point,
    each line and the summary calling it "an error of this machine, not of the point". Now: said once, as a
    configuration error; the other points are "the same"; nothing written; exit 2."""
    monkeypatch.setattr("dlm_bench.sweeps.job._SAID", set())
    code = main(["sweep", "objective=dlm", "objective.beta_batch=true", "objective.beta_index=range(0,3)",
                 "protocol.train_size=200", "model.num_inducing=5000", "trainer.max_iters=2", "trainer.progress=off",
                 f"results_dir={tmp_path}/res"])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 2, text
    assert text.count("model.num_inducing=5000 is larger than the training part (200 rows") == 1, text
    assert text.count("configuration error: model.num_inducing=5000") == 1, text
    assert text.count("the same configuration error as above") == 2, text
    assert "an error of this machine" not in text, text
    assert "3 not run (found before training, said above: a configuration error or one of this machine" in text
    assert not list(tmp_path.rglob("run.json"))


def test_a_bad_archive_placed_by_hand_is_kept_and_the_message_says_where(tmp_path, capsys, monkeypatch):
    """Issue 75: a bad archive put in the cache by hand (usps35's tar.bz2, not unpacked yet) was reported as "the
    bad file was removed" while it stayed in the cache, byte-identical. The user's file is kept, and the message
    says so and where."""
    from dlm_bench.data.datasets import get_spec
    from dlm_bench.data.fetch import cached_path

    monkeypatch.setenv("DLM_BENCH_MIRROR", "")
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    (rf,) = get_spec("usps35").files
    placed = cached_path(rf)
    placed.parent.mkdir(parents=True)
    placed.write_bytes(b"not the usps archive\n" * 50)
    before = placed.read_bytes()
    code = main(["fetch", "usps35"])
    text = "".join(capsys.readouterr())
    assert code != 0, text
    assert f"checksum mismatch for {rf.mirror_path}" in text and f"the file placed by hand was kept at {placed}" in text, text
    assert "removed" not in text, text
    assert placed.read_bytes() == before  # as the message says
