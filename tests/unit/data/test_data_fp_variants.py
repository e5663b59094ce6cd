"""The FP paper's dataset variants (Sheth & Khardon 2016, supp. Table 1): small generated fixtures in the upstream
file format, served from 127.0.0.1 as a mirror, fetched, parsed; each checks the documented selection rule (rows,
columns, uniqueness, dummy coding) against an expectation computed here with numpy from the fixture itself."""

from __future__ import annotations

import bz2
import dataclasses
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dlm_bench.data import get_spec
from dlm_bench.data import recipes
from dlm_bench.data.api import load_spec

RNG = np.random.default_rng(13)


def _put(root: Path, spec_name: str, index: int, data: bytes) -> None:
    path = root / get_spec(spec_name).files[index].mirror_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _load(name: str, n: int, root: Path, serve, monkeypatch, d: int | None = None):
    monkeypatch.setenv("DLM_BENCH_MIRROR", serve(root))
    spec = get_spec(name)
    files = tuple(dataclasses.replace(f, known_hash=None) for f in spec.files)  # flares: the fixture is not the real file
    return load_spec(dataclasses.replace(spec, shape=(n, spec.shape[1] if d is None else d), files=files))


def _libsvm_text(X: np.ndarray, y: np.ndarray) -> str:
    """LIBSVM lines ("+1 3:0.5 17:-1.2"), labels written as +1 / -1 like the LIBSVM files."""
    return "".join(f"{int(v):+d} " + " ".join(f"{j + 1}:{float(x[j])!r}" for j in np.flatnonzero(x)) + "\n"
                   for v, x in zip(y, X))


def _sparse(n: int, d: int, density: float = 0.05) -> np.ndarray:
    return np.where(RNG.random((n, d)) < density, RNG.normal(size=(n, d)).round(4), 0.0)


# ------------------------------------------------------------------------------------------- registered shapes
def test_registered_shapes_are_the_papers():
    """supp. Table 1 / Fig. 2 titles (spec section 1.4), typed in here, not read from the registry."""
    paper = {"epsilon_fp": (15000, 1000), "epsilon_count_fp": (15000, 500), "madelon_fp": (2600, 500),
             "wlan_inout_fp": (19085, 465), "wlan_long_fp": (19085, 465), "yearpred_fp": (51609, 90),
             "flares": (1065, 24), "space_ga": (3107, 6), "epsilon_fp_d250": (15000, 250),
             "epsilon_fp_d500": (15000, 500), "epsilon_fp_d750": (15000, 750)}
    assert {k: get_spec(k).shape for k in paper} == paper
    assert get_spec("epsilon_count_fp").task == "count" and get_spec("wlan_long_fp").task == "regression"
    # the DLM / earlier names keep their shapes
    assert get_spec("song").shape == get_spec("yearpred").shape == (515345, 90)
    assert get_spec("madelon").shape == (2000, 500) and get_spec("epsilon").shape == (20000, 2000)
    assert get_spec("wlan_inout").shape == (19937, 520)


# ------------------------------------------------------------------------------------------- epsilon
@pytest.mark.parametrize("name,d", [("epsilon_fp", 1000), ("epsilon_fp_d250", 250)])
def test_epsilon_fp_first_rows_and_features_of_test_file(name, d, tmp_path, cache, serve, monkeypatch):
    monkeypatch.setattr(recipes, "EPSILON_FP_ROWS", 9)
    X, y = _sparse(14, 2000), RNG.choice([-1, 1], 14)
    X[:, 1500] = 1.0  # features beyond the kept ones are read (index <= 2000) and dropped
    _put(tmp_path, name, 0, bz2.compress(_libsvm_text(X, y).encode()))
    assert get_spec(name).files[0].mirror_path == "epsilon/epsilon_normalized.t.bz2"  # the TEST file
    ds = _load(name, 9, tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(ds.X, X[:9, :d])
    np.testing.assert_array_equal(ds.y, (y[:9] == 1).astype(float))


def test_epsilon_count_fp_poisson_glm_from_the_prior(tmp_path, cache, serve, monkeypatch):
    monkeypatch.setattr(recipes, "EPSILON_FP_ROWS", 30)
    n = 40
    X = RNG.normal(size=(n, 2000)) * (RNG.random((n, 2000)) < 0.5)
    X = (X / np.linalg.norm(X, axis=1, keepdims=True)).round(6)  # rows of unit norm, as in epsilon_normalized
    labels = RNG.choice([-1, 1], n)
    _put(tmp_path, "epsilon_count_fp", 0, bz2.compress(_libsvm_text(X, labels).encode()))
    assert get_spec("epsilon_count_fp").files[0].mirror_path == "epsilon/epsilon_normalized.bz2"  # TRAINING file
    ds = _load("epsilon_count_fp", 30, tmp_path, serve, monkeypatch)
    Xk = X[:30, :500]
    np.testing.assert_array_equal(ds.X, Xk)
    # the documented rule, written out: default_rng(2016); w ~ N(0, 0.1 I) first; then y ~ Poisson(exp(X w))
    rng = np.random.default_rng(2016)
    w = rng.standard_normal(500) * np.sqrt(0.1)
    lam = np.exp(Xk @ w)
    np.testing.assert_array_equal(ds.y, rng.poisson(lam))
    assert ds.y.min() >= 0 and len(np.unique(ds.y)) > 2
    assert not np.array_equal(ds.y, (labels[:30] > 0).astype(float))  # the file's labels are not used


# ------------------------------------------------------------------------------------------- madelon
def test_madelon_fp_train_plus_validation(tmp_path, cache, serve, monkeypatch):
    Xa, ya = _sparse(6, 500, 0.3).round(0), RNG.choice([-1, 1], 6)
    Xb, yb = _sparse(4, 500, 0.3).round(0), RNG.choice([-1, 1], 4)
    _put(tmp_path, "madelon_fp", 0, _libsvm_text(Xa, ya).encode())
    _put(tmp_path, "madelon_fp", 1, _libsvm_text(Xb, yb).encode())
    assert [f.mirror_path for f in get_spec("madelon_fp").files] == ["madelon/madelon", "madelon/madelon.t"]
    ds = _load("madelon_fp", 10, tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(ds.X, np.vstack([Xa, Xb]))
    np.testing.assert_array_equal(ds.y, (np.concatenate([ya, yb]) == 1).astype(float))


# ------------------------------------------------------------------------------------------- wlan
UJI_TAIL = ["LONGITUDE", "LATITUDE", "FLOOR", "BUILDINGID", "SPACEID", "RELATIVEPOSITION", "USERID", "PHONEID",
            "TIMESTAMP"]


def _uji_fixture(n_base: int = 30, n_dead: int = 55):
    """UJIIndoorLoc-like training file: 520 WAPs, n_dead of them never detected (RSSI 100 in every row), exact
    duplicate rows and rows that repeat another row's WAP vector with another position/time."""
    dead = np.sort(RNG.choice(520, n_dead, replace=False))
    rssi = np.where(RNG.random((n_base, 520)) < 0.3, RNG.integers(-104, -30, (n_base, 520)), 100)
    live = np.setdiff1d(np.arange(520), dead)
    rssi[RNG.integers(4, n_base, len(live)), live] = -70  # every live WAP is detected somewhere
    rssi[:, dead] = 100
    rssi[3] = 100  # a scan with no WAP detected (occurs in UJIIndoorLoc)
    lon = RNG.normal(-7500, 50, n_base).round(3)
    rel = RNG.integers(1, 3, n_base)
    ts = 1371713733 + np.arange(n_base)
    # exact duplicates of rows 2 and 5; row 7's and row 3's fingerprints again with another position and time
    order = list(range(n_base)) + [2, 5]
    rows = [(rssi[i], lon[i], rel[i], ts[i]) for i in order]
    rows.insert(10, (rssi[7], lon[7] + 1.0, 3 - rel[7], ts[7] + 99))
    rows.append((rssi[3], -7400.0, 2, 1371800000))
    return rows, dead


@pytest.mark.parametrize("name", ["wlan_inout_fp", "wlan_long_fp"])
def test_ujiindoorloc_fp_unique_rows_and_informative_waps(name, tmp_path, cache, serve, monkeypatch):
    rows, dead = _uji_fixture()
    header = ",".join([f"WAP{i:03d}" for i in range(1, 521)] + UJI_TAIL)
    body = "".join(",".join(map(str, r)) + f",{lo},4864900.1,2,1,106,{rp},2,23,{t}\n" for r, lo, rp, t in rows)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("UJIndoorLoc/trainingData.csv", header + "\n" + body)
        z.writestr("UJIndoorLoc/validationData.csv", header + "\n")
    _put(tmp_path, name, 0, buf.getvalue())
    W = np.array([r[0] for r in rows], dtype=float)
    # independent expectation: numpy's unique rows of the WAP block; first occurrences in file order
    n_unique = len(np.unique(W, axis=0))
    assert n_unique == len(rows) - 4  # the fixture's 2 exact + 2 fingerprint duplicates
    first = sorted({tuple(r): i for i, r in reversed(list(enumerate(W)))}.values())
    live = np.setdiff1d(np.arange(520), dead)
    assert len(live) == 465  # as in the real file: 55 WAPs never detected in training
    ds = _load(name, n_unique, tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(ds.X, W[np.ix_(first, live)])
    assert ds.feature_names == [f"WAP{j + 1:03d}" for j in live]
    target = np.array([r[2] == 2 for r in rows], float) if name == "wlan_inout_fp" else np.array([r[1] for r in rows])
    np.testing.assert_array_equal(ds.y, target[first])


# ------------------------------------------------------------------------------------------- yearpred
def test_yearpred_fp_unique_rows_of_the_test_part(tmp_path, cache, serve, monkeypatch):
    monkeypatch.setattr(recipes, "YEARPRED_TRAIN_ROWS", 12)
    t = np.column_stack([RNG.integers(1922, 2011, 30), RNG.normal(size=(30, 90)).round(5)])
    t[20] = t[14]            # duplicate inside the test part: dropped
    t[27] = t[14]
    t[25] = t[3]             # equals a training-part row: kept (uniqueness is within the test part)
    t[22, 1:] = t[16, 1:]    # same features, another year: a different row, kept
    t[22, 0] = t[16, 0] + 1
    text = "\n".join(",".join(f"{v:.6g}" for v in row) for row in t) + "\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("YearPredictionMSD.txt", text)
    _put(tmp_path, "yearpred_fp", 0, buf.getvalue())
    parsed = np.array([[float(f"{v:.6g}") for v in row] for row in t])  # the values as written
    test = parsed[12:]
    assert len(np.unique(test, axis=0)) == 16  # 18 test rows, 2 repeats
    keep = [i for i in range(len(test)) if not any((test[j] == test[i]).all() for j in range(i))]
    ds = _load("yearpred_fp", 16, tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(ds.y, test[keep, 0])
    np.testing.assert_allclose(ds.X, test[keep, 1:], rtol=1e-12)


# ------------------------------------------------------------------------------------------- flares
def test_flares_1065_first_record_dropped_and_full_dummy_coding(tmp_path, cache, serve, monkeypatch):
    header = ("class largest_spot_size spot_distribution activity evolution past_activity historically_complex "
              "hc_past area area_largest C M X")
    cls, size, dist = RNG.choice(list("BCDEFH"), 12), RNG.choice(list("XRSAHK"), 12), RNG.choice(list("XOIC"), 12)
    codes = RNG.integers(1, 4, (12, 7))
    counts = RNG.integers(0, 5, (12, 3))
    lines = [header] + [f"{a} {b} {c} " + " ".join(map(str, k)) + " " + " ".join(map(str, m))
                        for a, b, c, k, m in zip(cls, size, dist, codes, counts)]
    _put(tmp_path, "flares", 0, ("\n".join(lines) + "\n").encode())
    ds = _load("flares", 11, tmp_path, serve, monkeypatch)
    # one-hot with every declared level (class A included though it never occurs): 7 + 6 + 4 + 7 codes = 24
    expect = np.hstack([(cls[1:, None] == np.array(list("ABCDEFH"))), (size[1:, None] == np.array(list("XRSAHK"))),
                        (dist[1:, None] == np.array(list("XOIC"))), codes[1:]]).astype(float)
    assert ds.X.shape == (11, 24)
    np.testing.assert_array_equal(ds.X, expect)
    np.testing.assert_array_equal(ds.y, counts[1:, 0])  # C-class flare counts


def test_flares_offline_copy_is_1066_uci_rows_minus_the_first(shared_data, cache, monkeypatch):
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(shared_data))
    raw = (shared_data / "flares/uci/flare.data2").read_text().split("\n")[1:]
    raw = [r.split() for r in raw if r.strip()]
    assert len(raw) == 1066  # UCI flare.names: 1066 instances
    ds = load_spec(get_spec("flares"))
    assert ds.X.shape == (1065, 24)
    np.testing.assert_array_equal(ds.y, [float(r[10]) for r in raw[1:]])
    np.testing.assert_array_equal(ds.X[:, 17:], [[float(v) for v in r[3:10]] for r in raw[1:]])
