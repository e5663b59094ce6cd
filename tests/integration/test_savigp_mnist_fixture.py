"""SAVIGP Fig. 4 data path without the network: a small GENERATED MNIST in the upstream file format (the four
gzipped idx files of yann.lecun.com, at the registry's mirror paths) in a local mirror directory, fetched and parsed
through the registry's mnist / mnist_oddeven entries, then a tiny `savigp_fig4` run (FG, logistic, M = 10 by
k-means, two short global iterations) on it."""

from __future__ import annotations

import dataclasses
import gzip
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dlm_bench.data import get_spec
from dlm_bench.data.api import load_dataset
from dlm_bench.data.datasets import DATASETS
from dlm_bench.run import execute
from dlm_bench.sweeps.compose import compose_config

N_TRAIN, N_TEST = 80, 30


def _idx(arr: np.ndarray) -> bytes:
    """idx format: big-endian magic (0, 0x08 = uint8, ndim), the dims as uint32, the uint8 payload; gzipped."""
    return gzip.compress(struct.pack(">HBB", 0, 8, arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
                         + arr.astype(np.uint8).tobytes())


def _digits(rng, templates, n):
    """Digit-like 28 x 28 uint8 images: a per-class random template (blobs of ink) plus pixel noise."""
    labels = rng.integers(0, 10, n)
    imgs = templates[labels] + rng.normal(0, 30, (n, 28, 28))
    return np.clip(imgs, 0, 255).round().astype(np.uint8), labels.astype(np.uint8)


@pytest.fixture
def mnist_mirror(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    templates = (rng.random((10, 28, 28)) < 0.2) * 255.0
    tr_x, tr_y = _digits(rng, templates, N_TRAIN)
    te_x, te_y = _digits(rng, templates, N_TEST)
    mirror = tmp_path / "mirror"
    for f, arr in zip(get_spec("mnist_oddeven").files, [tr_x, tr_y, te_x, te_y]):
        path = mirror / f.mirror_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_idx(arr))
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(mirror))
    monkeypatch.setenv("DLM_BENCH_DATA", str(tmp_path / "cache"))
    n = N_TRAIN + N_TEST
    for name in ("mnist", "mnist_oddeven"):  # the registry's entries, shape check sized to the fixture
        unpinned = tuple(dataclasses.replace(f, known_hash=None) for f in get_spec(name).files)  # generated, not the real files
        monkeypatch.setitem(DATASETS, name, dataclasses.replace(get_spec(name), shape=(n, 784), files=unpinned))
    return tmp_path, (tr_x, tr_y, te_x, te_y)


def test_fetch_and_parse_shapes_and_labels(mnist_mirror):
    _, (tr_x, tr_y, te_x, te_y) = mnist_mirror
    assert [f.mirror_path for f in get_spec("mnist_oddeven").files] == [
        "mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz",
        "mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"]
    digits = np.concatenate([tr_y, te_y]).astype(float)
    ten = load_dataset("mnist")
    assert ten.X.shape == (N_TRAIN + N_TEST, 784) and ten.task == "multiclass"
    np.testing.assert_array_equal(ten.y, digits)
    oe = load_dataset("mnist_oddeven")
    assert oe.X.shape == (N_TRAIN + N_TEST, 784) and oe.task == "binary"
    # the registry documents odd = 1, even = 0; the savigp runner maps 2y - 1 -> odd +1, even -1 as upstream
    np.testing.assert_array_equal(oe.y, digits % 2)
    np.testing.assert_array_equal(oe.X[:N_TRAIN], tr_x.reshape(-1, 784))
    np.testing.assert_array_equal(oe.X[N_TRAIN:], te_x.reshape(-1, 784))  # raw 0..255 pixels (x_scale = 1/255 in the run)
    [(tr, te)] = oe.fixed_splits
    assert list(tr) == list(range(N_TRAIN)) and list(te) == list(range(N_TRAIN, N_TRAIN + N_TEST))


def test_tiny_fig4_run(mnist_mirror):
    root, (_, _, _, te_y) = mnist_mirror
    cfg = compose_config(["experiment=savigp_fig4", "savigp.num_inducing=10", "savigp.num_samples=100",
                          "savigp.max_iter=2", "savigp.evals_mog=10", "savigp.evals_hyp=5",
                          f"results_dir={root / 'res'}"])
    assert cfg.savigp.likelihood == "logistic" and cfg.savigp.inducing == "kmeans" and cfg.savigp.posterior == "fg"
    record, run_dir = execute(cfg)
    assert record.status == "ok", record.error
    assert record.num_inducing == 10 and record.train_size == N_TRAIN
    m = record.metrics
    assert np.isfinite(m["test_err"]) and np.isfinite(m["test_nlp"]) and 0 <= m["test_err"] <= 1
    # the fixture's classes are separable templates: better than the majority rate of the test set
    majority = max(np.mean(te_y % 2), 1 - np.mean(te_y % 2))
    assert m["test_err"] < 1 - majority
    pts = pd.read_csv(run_dir / "points.csv")
    assert len(pts) == N_TEST
    curve = pd.read_csv(run_dir / "curve.csv")  # track = true: test ER / NLP per global iteration
    assert len(curve) >= 1 and np.isfinite(curve.filter(like="test").to_numpy(dtype=float)).all()
