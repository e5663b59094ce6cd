"""UJIIndoorLoc from the offline mirror's third-party zip (issue 73): catalog.yaml registers it as its own file
(`copy_of: uji/ujiindoorloc.zip`, its own sha256, members at the archive root) that stands in for UCI's zip only
where the copy is here and UCI's zip is not. Fixtures: small zips laid out like the real ones, in a directory mirror;
expectations computed here with numpy from the fixture; the real-file checks compare with the counts in
../shared/data/uji/SOURCE.txt (skipped without ../shared)."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dlm_bench.data import DatasetError, get_spec
from dlm_bench.data.api import fetch, load_spec
from dlm_bench.data.availability import availability

fetch_mod = importlib.import_module("dlm_bench.data.fetch")
catalog = importlib.import_module("dlm_bench.data.catalog")

UCI = "uji/ujiindoorloc.zip"
COPY = "uji/wifnn/UJIIndoorLoc.zip"
TAIL = ["LONGITUDE", "LATITUDE", "FLOOR", "BUILDINGID", "SPACEID", "RELATIVEPOSITION", "USERID", "PHONEID", "TIMESTAMP"]
RNG = np.random.default_rng(73)


def _table(n: int = 12, dead: int = 55):
    """A trainingData.csv: 520 WAPs of which `dead` are never detected, rows 1 and 2 repeat row 0's WAPs."""
    rssi = np.where(RNG.random((n, 520)) < 0.4, RNG.integers(-104, -30, (n, 520)), 100)
    rssi[3 + np.arange(520 - dead) % (n - 3), np.arange(520 - dead)] = -70  # every live WAP is detected somewhere
    rssi[:, 520 - dead:] = 100
    rssi[1] = rssi[2] = rssi[0]
    lon = RNG.normal(-7500, 50, n).round(3)
    rel = RNG.integers(1, 3, n)
    header = ",".join([f"WAP{i:03d}" for i in range(1, 521)] + TAIL)
    body = "".join(",".join(map(str, r)) + f",{lo},4864900.1,2,1,106,{rp},2,23,1371713733\n"
                   for r, lo, rp in zip(rssi, lon, rel))
    return header + "\n" + body, rssi, lon, rel


def _zip(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


def _copy_zip(text: str) -> bytes:
    """Laid out like the mirror's copy: members at the archive root."""
    return _zip({"trainingData.csv": text, "validationData.csv": text.split("\n", 1)[0] + "\n"})


def _mirror(root: Path, path: str, data: bytes) -> Path:
    p = root / path
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def _pinned_to(spec, data: bytes, n: int):
    """`spec` with its copy's pin replaced by the fixture's own sha256 (the real pin is the real file's) and N = n."""
    rf = spec.files[0]
    pin = "sha256:" + hashlib.sha256(data).hexdigest()
    copies = tuple(dataclasses.replace(c, known_hash=pin) for c in rf.copies)
    return dataclasses.replace(spec, shape=(n, spec.shape[1]), files=(dataclasses.replace(rf, copies=copies),))


def test_the_copy_is_registered_as_itself_and_ucis_zip_stays_canonical():
    for name in ("wlan_inout", "wlan_inout_fp", "wlan_long", "wlan_long_fp"):
        rf = get_spec(name).files[0]
        assert rf.mirror_path == UCI and rf.url == "https://archive.ics.uci.edu/static/public/310/ujiindoorloc.zip"
        assert rf.known_hash == "sha256:893512b82dfd7a7c345d84195b1c8019fbca0fa0d7820ce491ce5aa45ec3782f"
        assert rf.members == ("UJIndoorLoc/trainingData.csv",)
        (copy,) = rf.copies
        # the values of ../shared/data/uji/SOURCE.txt
        assert copy.mirror_path == COPY and copy.size == 1571172 and copy.members == ("trainingData.csv",)
        assert copy.known_hash == "sha256:33e9113a53b009dd363732fe2f1e006d94ee854b20ce4d606f0da4e1bfe800f4"
        assert "d7d3f060ff926a227df7cfe334eb4bb4acf882b7" in copy.url and "NOT UCI" in copy.evidence
    assert get_spec("wlan_inout_fp").shape == (19085, 465) and get_spec("wlan_long_fp").shape == (19085, 465)


@pytest.mark.parametrize("name", ["wlan_inout", "wlan_long_fp"])
def test_loads_from_the_copy_in_a_directory_mirror(name, tmp_path, cache, monkeypatch):
    text, rssi, lon, rel = _table()
    data = _copy_zip(text)
    _mirror(tmp_path / "mirror", COPY, data)
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "mirror"))
    n = 12 if name == "wlan_inout" else 10  # rows 1 and 2 repeat row 0's WAPs
    spec = _pinned_to(get_spec(name), data, n)
    if name == "wlan_long_fp":
        spec = dataclasses.replace(spec, shape=(n, 465))
    assert fetch_mod.choose(spec.files[0]).mirror_path == COPY
    ds = load_spec(spec)
    if name == "wlan_inout":
        np.testing.assert_array_equal(ds.X, rssi)
        np.testing.assert_array_equal(ds.y, (rel == 2).astype(float))
    else:
        keep = [0] + list(range(3, 12))
        np.testing.assert_array_equal(ds.X, rssi[keep][:, :465])
        np.testing.assert_array_equal(ds.y, lon[keep])
    # cached under the copy's own path, with its own member name; UCI's path untouched
    assert (cache / COPY).is_file() and (cache / (COPY + ".unzip") / "trainingData.csv").is_file()
    assert not (cache / UCI).exists()
    assert fetch_mod.status(spec) == "cached"


def test_a_copy_that_does_not_match_its_own_pin_is_refused(tmp_path, cache, monkeypatch):
    text, *_ = _table()
    _mirror(tmp_path / "mirror", COPY, _copy_zip(text))
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "mirror"))
    with pytest.raises(DatasetError, match=r"checksum mismatch for uji/wifnn/UJIIndoorLoc.zip .*expected sha256:33e9113a"):
        load_spec(get_spec("wlan_inout"))
    assert not (cache / COPY).exists()


def test_ucis_zip_is_preferred_where_both_are_in_the_mirror(tmp_path, cache, monkeypatch):
    text, rssi, _, rel = _table()
    _mirror(tmp_path / "mirror", COPY, _copy_zip(text))
    uci = _zip({"UJIndoorLoc/trainingData.csv": text, "UJIndoorLoc/validationData.csv": text.split("\n", 1)[0]})
    _mirror(tmp_path / "mirror", UCI, uci)
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "mirror"))
    rf = get_spec("wlan_inout").files[0]
    assert fetch_mod.choose(rf) is rf
    spec = get_spec("wlan_inout")
    pinned = dataclasses.replace(rf, known_hash="sha256:" + hashlib.sha256(uci).hexdigest())
    ds = load_spec(dataclasses.replace(spec, shape=(12, 520), files=(pinned,)))
    np.testing.assert_array_equal(ds.X, rssi)
    assert (cache / UCI).is_file() and not (cache / COPY).exists()


def test_without_either_the_mirror_names_ucis_path(tmp_path, cache, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "empty"))
    assert availability("wlan_inout").startswith("no known source (not in DLM_BENCH_MIRROR")
    monkeypatch.delenv("DLM_BENCH_MIRROR")
    assert availability("wlan_inout") == "download of 1.5 MB"  # UCI's zip, 1,463,759 B


def test_copy_of_must_name_a_canonical_file():
    entries = {"a.zip": {"url": "u"}, "b.zip": {"url": "v", "copy_of": "c.zip"}}
    files = {k: catalog.remote_file(k, e) for k, e in entries.items()}
    with pytest.raises(ValueError, match=r"file b.zip: copy_of 'c.zip' is not a canonical file"):
        catalog.attach_copies(entries, files)
    entries["b.zip"]["copy_of"] = "a.zip"
    out = catalog.attach_copies(entries, {k: catalog.remote_file(k, e) for k, e in entries.items()})
    assert [c.mirror_path for c in out["a.zip"].copies] == ["b.zip"]


@pytest.mark.slow
def test_real_mirror_copy_gives_the_source_txt_counts(tmp_path, cache, monkeypatch, shared_data):
    """The mirror's real zip: 19937 training rows, RELATIVEPOSITION 2 in 16608 of them, 19085 rows unique over the
    WAPs and 465 WAPs not constant over them (SOURCE.txt's independent counts)."""
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(shared_data))
    assert availability("wlan_inout") == "in mirror"
    out = fetch(["wlan_inout", "wlan_long_fp"])
    assert [ok for _, ok, _ in out] == [True, True], out
    ds = load_spec(get_spec("wlan_inout"))
    assert ds.X.shape == (19937, 520) and int(ds.y.sum()) == 16608
    fp = load_spec(get_spec("wlan_long_fp"))
    assert fp.X.shape == (19085, 465) and len(fp.feature_names) == 465
    assert availability("wlan_inout") == "cached" and (cache / COPY).is_file()
