"""Datasets without an offline copy: small generated fixtures in the upstream format, served from
127.0.0.1 as a mirror, fetched (unpacked where the upstream is an archive), parsed and shape-checked."""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import io
import shutil
import struct
import subprocess
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from dlm_bench.data import get_spec
from dlm_bench.data.api import load_spec
from dlm_bench.data.parsers import unlzw

RNG = np.random.default_rng(0)


def _put(root: Path, spec_name: str, index: int, data: bytes) -> None:
    path = root / get_spec(spec_name).files[index].mirror_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _load(name: str, n: int, root: Path, serve, monkeypatch):
    monkeypatch.setenv("DLM_BENCH_MIRROR", serve(root))
    # generated files in the upstream format: the registry's sha256 pins (a9a, MNIST) belong to the real files
    unpinned = tuple(dataclasses.replace(f, known_hash=None) for f in get_spec(name).files)
    spec = dataclasses.replace(get_spec(name), shape=(n, get_spec(name).shape[1]), files=unpinned)
    return load_spec(spec)


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


def _mat(**arrays) -> bytes:
    buf = io.BytesIO()
    scipy.io.savemat(buf, arrays)
    return buf.getvalue()


def test_sarcos_train_mat_plus_real_test_file(tmp_path, cache, serve, monkeypatch, shared_data):
    train = RNG.normal(size=(30, 28))
    _put(tmp_path, "sarcos", 0, _mat(sarcos_inv=train))
    shutil.copy(shared_data / "sarcos/gpml_raw/sarcos_inv_test.mat", tmp_path / "sarcos/gpml_raw/sarcos_inv_test.mat")
    ds = _load("sarcos", 30 + 4449, tmp_path, serve, monkeypatch)
    np.testing.assert_allclose(ds.X[:30], train[:, :21])
    np.testing.assert_allclose(ds.y[:30], train[:, 21])  # joint-1 torque


@pytest.mark.parametrize("name", ["song", "yearpred"])
def test_song_zip(name, tmp_path, cache, serve, monkeypatch):
    t = np.column_stack([RNG.integers(1922, 2011, 25), RNG.normal(size=(25, 90))])
    text = "\n".join(",".join(f"{v:.6g}" for v in row) for row in t) + "\n"
    _put(tmp_path, name, 0, _zip({"YearPredictionMSD.txt": text.encode()}))
    ds = _load(name, 25, tmp_path, serve, monkeypatch)
    np.testing.assert_allclose(ds.y, t[:, 0])
    np.testing.assert_allclose(ds.X, t[:, 1:], rtol=1e-5)
    # converted once: the second load reads the cached .npz, even with the mirror gone
    monkeypatch.setenv("DLM_BENCH_MIRROR", "http://127.0.0.1:9")
    again = load_spec(dataclasses.replace(get_spec(name), shape=(25, 90)))
    np.testing.assert_array_equal(again.X, ds.X)


AIRLINE_HEADER = ("Year,Month,DayofMonth,DayOfWeek,DepTime,CRSDepTime,ArrTime,CRSArrTime,UniqueCarrier,FlightNum,"
                  "TailNum,ActualElapsedTime,CRSElapsedTime,AirTime,ArrDelay,DepDelay,Origin,Dest,Distance,TaxiIn,"
                  "TaxiOut,Cancelled,CancellationCode,Diverted,CarrierDelay,WeatherDelay,NASDelay,SecurityDelay,"
                  "LateAircraftDelay")


def test_airline_hensman_preprocessing(tmp_path, cache, serve, monkeypatch):
    rows = [
        # month, dom, dow, dep, arr, tail, airtime, arrdelay, distance
        (1, 3, 4, 2003, 2211, "N712SW", 116, -14, 810),   # kept, on time -> 0
        (2, 3, 4, 754, 1002, "N772SW", 113, 2, 810),      # kept, late -> 1
        (4, 30, 3, 628, 804, "N428WN", 76, 14, 515),      # kept
        (5, 1, 4, 1829, 1959, "N712SW", 77, 34, 515),     # May: outside Jan-Apr, dropped
        (3, 9, 7, "NA", "NA", "N712SW", "NA", "NA", 688),  # cancelled, dropped
        (3, 9, 7, 1940, 2121, "N999ZZ", 80, 5, 688),       # plane without a year, dropped
    ]
    lines = [AIRLINE_HEADER]
    for m, dom, dow, dep, arr, tail, air, delay, dist in rows:
        lines.append(f"2008,{m},{dom},{dow},{dep},1955,{arr},2225,WN,335,{tail},128,150,{air},{delay},8,IAD,TPA,"
                     f"{dist},4,8,0,,0,NA,NA,NA,NA,NA")
    _put(tmp_path, "airline", 0, bz2.compress(("\n".join(lines) + "\n").encode()))
    planes = ("tailnum,type,manufacturer,issue_date,model,status,aircraft_type,engine_type,year\n"
              "N712SW,Corporation,BOEING,01/01/1998,737-7H4,Valid,Fixed Wing Multi-Engine,Turbo-Fan,1998\n"
              "N772SW,Corporation,BOEING,03/22/2000,737-7H4,Valid,Fixed Wing Multi-Engine,Turbo-Fan,2000\n"
              "N428WN,Corporation,BOEING,07/31/2003,737-7H4,Valid,Fixed Wing Multi-Engine,Turbo-Fan,2003\n"
              "N999ZZ,Corporation,BOEING,None,737-7H4,Valid,Fixed Wing Multi-Engine,Turbo-Fan,None\n"
              "N050AA\n")
    _put(tmp_path, "airline", 1, planes.encode())
    ds = _load("airline", 3, tmp_path, serve, monkeypatch)
    assert ds.feature_names == ["Month", "DayofMonth", "DayOfWeek", "PlaneAge", "Distance", "AirTime", "DepTime", "ArrTime"]
    np.testing.assert_array_equal(ds.X[:, 3], [10, 8, 5])  # 2008 - year of manufacture
    np.testing.assert_array_equal(ds.y, [0, 1, 1])
    np.testing.assert_array_equal(ds.X[0], [1, 3, 4, 10, 810, 116, 2003, 2211])


def test_airline_chunked_parse_equals_single_chunk(tmp_path):
    from dlm_bench.data.airline import parse_airline

    lines = [AIRLINE_HEADER]
    for i in range(50):
        lines.append(f"2008,{1 + i % 4},{1 + i % 28},{1 + i % 7},{600 + i},600,{800 + i},800,WN,1,N712SW,"
                     f"1,1,{60 + i},{i - 25},x,y,{300 + i},1,1,0,,0,NA,NA,NA,NA,NA")
    (tmp_path / "f.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "p.csv").write_text("tailnum,type,manufacturer,issue_date,model,status,aircraft_type,engine_type,year\n"
                                    "N712SW,a,b,c,d,e,f,g,1998\n")
    a = parse_airline(tmp_path / "f.csv", tmp_path / "p.csv", chunk_rows=7)
    b = parse_airline(tmp_path / "f.csv", tmp_path / "p.csv", chunk_rows=1000)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[0].shape == (50, 8) and a[1].sum() == 24  # delays 1..24 are > 0


def test_usps35_tar_bz2(tmp_path, cache, serve, monkeypatch):
    n_tr, n_te = 40, 30
    digits_tr, digits_te = RNG.integers(0, 10, n_tr), RNG.integers(0, 10, n_te)

    def onehot(d):
        out = -np.ones((10, len(d)))
        out[d, np.arange(len(d))] = 1
        return out

    mat = _mat(train_patterns=RNG.normal(size=(256, n_tr)), train_labels=onehot(digits_tr),
               test_patterns=RNG.normal(size=(256, n_te)), test_labels=onehot(digits_te))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:bz2") as tar:
        info = tarfile.TarInfo("usps_resampled/usps_resampled.mat")
        info.size = len(mat)
        tar.addfile(info, io.BytesIO(mat))
    _put(tmp_path, "usps35", 0, buf.getvalue())
    digits = np.concatenate([digits_tr, digits_te])
    keep = (digits == 3) | (digits == 5)
    ds = _load("usps35", int(keep.sum()), tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(ds.y, (digits[keep] == 3).astype(float))


def _lzw_compress(data: bytes, maxbits: int = 16) -> bytes:
    """Unix `compress` encoder (block mode, no CLEAR), only for building test fixtures."""
    table = {bytes([i]): i for i in range(256)}
    free, bits, codes = 257, 9, []
    w = data[:1]
    for b in data[1:]:
        wc = w + bytes([b])
        if wc in table:
            w = wc
            continue
        codes.append((table[w], bits))
        if free > (1 << bits) - 1 and bits < maxbits:
            codes.append(("pad", bits))
            bits += 1
        if free < (1 << maxbits):
            table[wc] = free
            free += 1
        w = bytes([b])
    codes.append((table[w], bits))
    out, acc, nacc, group_bits = bytearray([0x1F, 0x9D, 0x80 | maxbits]), 0, 0, 0
    for code, width in codes:
        if code == "pad":  # a width change ends the current group of 8 codes
            skip = (-group_bits) % (width * 8)
            acc, nacc, group_bits = acc, nacc + skip, 0
        else:
            acc |= code << nacc
            nacc += width
            group_bits += width
        while nacc >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            nacc -= 8
    if nacc:
        out.append(acc & 0xFF)
    return bytes(out)


def test_unlzw_against_system_uncompress(tmp_path):
    data = ("".join(f"{RNG.integers(0, 1000)}," for _ in range(6000))).encode()
    z = _lzw_compress(data)
    assert unlzw(z) == data  # > 512 codes: exercises the 9 -> 10 -> 11 bit width changes
    if shutil.which("gzip"):  # gzip decodes .Z: an independent decoder checks the fixture encoder
        assert subprocess.run(["gzip", "-dc"], input=z, capture_output=True, check=True).stdout == data


def test_musk_dot_z(tmp_path, cache, serve, monkeypatch):
    n = 12
    feats = RNG.integers(-300, 300, size=(n, 166))
    labels = RNG.integers(0, 2, n)
    text = "".join(f"MUSK-{i},{i}+1," + ",".join(map(str, f)) + f",{l}.\n" for i, (f, l) in enumerate(zip(feats, labels)))
    _put(tmp_path, "musk", 0, _lzw_compress(text.encode()))
    ds = _load("musk", n, tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(ds.X, feats)
    np.testing.assert_array_equal(ds.y, labels)


@pytest.mark.parametrize("name,d,binary", [("a9a", 123, True), ("madelon", 500, True), ("cpusmall", 12, False),
                                           ("space_ga", 6, False), ("epsilon", 2000, True)])
def test_libsvm(name, d, binary, tmp_path, cache, serve, monkeypatch):
    n = 15
    X = np.where(RNG.random((n, d)) < 0.2, RNG.normal(size=(n, d)).round(4), 0.0)
    y = RNG.choice([-1, 1], n) if binary else RNG.normal(size=n).round(4)
    text = "".join(f"{'+1' if v == 1 else v} " + " ".join(f"{j + 1}:{x[j]}" for j in np.flatnonzero(x)) + "\n"
                   for v, x in zip(y, X))
    data = bz2.compress(text.encode()) if name == "epsilon" else text.encode()
    _put(tmp_path, name, 0, data)
    ds = _load(name, n, tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.y, (y > 0).astype(float) if binary else y)


@pytest.mark.parametrize("name", ["wlan_inout", "wlan_long"])
def test_ujiindoorloc_zip(name, tmp_path, cache, serve, monkeypatch):
    n = 8
    rssi = RNG.choice([100, -50, -90], size=(n, 520))
    lon, rel = RNG.normal(-7500, 50, n).round(3), RNG.integers(1, 3, n)
    header = ",".join([f"WAP{i:03d}" for i in range(1, 521)] + ["LONGITUDE", "LATITUDE", "FLOOR", "BUILDINGID",
                                                                "SPACEID", "RELATIVEPOSITION", "USERID", "PHONEID", "TIMESTAMP"])
    body = "".join(",".join(map(str, r)) + f",{lo},4864900.1,2,1,106,{rp},2,23,1371713733\n" for r, lo, rp in zip(rssi, lon, rel))
    _put(tmp_path, name, 0, _zip({"UJIndoorLoc/trainingData.csv": (header + "\n" + body).encode(),
                                  "UJIndoorLoc/validationData.csv": header.encode()}))
    ds = _load(name, n, tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(ds.X, rssi)
    np.testing.assert_array_equal(ds.y, (rel == 2).astype(float) if name == "wlan_inout" else lon)


def _idx(arr: np.ndarray) -> bytes:
    return gzip.compress(struct.pack(">HBB", 0, 8, arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
                         + arr.astype(np.uint8).tobytes())


@pytest.mark.parametrize("name", ["mnist", "mnist_oddeven"])
def test_mnist_idx(name, tmp_path, cache, serve, monkeypatch):
    imgs = [RNG.integers(0, 256, (k, 28, 28)) for k in (6, 4)]
    labs = [RNG.integers(0, 10, k) for k in (6, 4)]
    for i, arr in enumerate([imgs[0], labs[0], imgs[1], labs[1]]):
        _put(tmp_path, name, i, _idx(arr))
    ds = _load(name, 10, tmp_path, serve, monkeypatch)
    y = np.concatenate(labs)
    np.testing.assert_array_equal(ds.y, y % 2 if name == "mnist_oddeven" else y)
    np.testing.assert_array_equal(ds.X[7], imgs[1][1].reshape(-1))
    [(tr, te)] = ds.fixed_splits
    assert list(tr) == list(range(6)) and list(te) == [6, 7, 8, 9]


@pytest.mark.parametrize("direction", [0, 1, 2])
def test_peds1_feats_mat(direction, tmp_path, cache, serve, monkeypatch):
    """Laid out like the real archive: ucsdpeds_feats.zip holds ucsdpeds_feats/features/Peds1_feats.mat (public
    MATLAB code loads that path), with cnt{1}, cnt{2} the two directions and cnt{3} their total."""
    n = 9
    fv = np.empty((1, 3), dtype=object)
    cnt = np.empty((1, 3), dtype=object)
    for j in range(2):
        fv[0, j] = RNG.normal(size=(30, n)) + j
        cnt[0, j] = RNG.integers(0, 40, (1, n)).astype(float)
    fv[0, 2] = RNG.normal(size=(30, n)) + 2
    cnt[0, 2] = cnt[0, 0] + cnt[0, 1]
    name = f"peds1_dir{direction}"
    member = "ucsdpeds_feats/features/Peds1_feats.mat"
    assert get_spec(name).files[0].members == (member,)
    _put(tmp_path, name, 0, _zip({member: _mat(fv=fv, cnt=cnt, dirs=np.array(["away", "towards", "total"]))}))
    ds = _load(name, n, tmp_path, serve, monkeypatch)
    np.testing.assert_allclose(ds.X, fv[0, direction].T)
    np.testing.assert_array_equal(ds.y, cnt[0, direction].ravel())
    if direction == 2:  # the third column is the total of the two directions, not a third direction
        np.testing.assert_array_equal(ds.y, cnt[0, 0].ravel() + cnt[0, 1].ravel())


def test_sarcos_dedup_drops_exact_duplicates_before_splitting(tmp_path, cache, serve, monkeypatch):
    """A fixture shaped like GPML's files (sarcos_inv 28 columns, sarcos_inv_test = some training rows again, as
    public analyses report for the real test file): sarcos pools all rows (the papers' choice, the default),
    sarcos_dedup keeps each distinct row once, first occurrence, file order (expectation from pandas)."""
    import pandas as pd

    train = RNG.normal(size=(40, 28)).round(3)
    train[17] = train[3]  # a duplicate inside the training file
    test = np.vstack([train[::10], RNG.normal(size=(5, 28)).round(3)])  # every 10th training row + 5 new
    test[-1, :21] = train[5, :21]  # same inputs, another torque: a different row, kept
    _put(tmp_path, "sarcos", 0, _mat(sarcos_inv=train))
    _put(tmp_path, "sarcos", 1, _mat(sarcos_inv_test=test))
    pooled = np.vstack([train, test])
    want = pd.DataFrame(pooled).drop_duplicates().to_numpy()
    assert len(pooled) == 49 and len(want) == 49 - 1 - 4
    full = _load("sarcos", 49, tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(full.X, pooled[:, :21])
    dedup = _load("sarcos_dedup", len(want), tmp_path, serve, monkeypatch)
    np.testing.assert_array_equal(dedup.X, want[:, :21])
    np.testing.assert_array_equal(dedup.y, want[:, 21])
    assert get_spec("sarcos_dedup").shape == (None, 21) and get_spec("sarcos").shape == (48933, 21)
