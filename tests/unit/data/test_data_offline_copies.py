"""Every dataset whose upstream files are in ../shared/data: fetched through a local HTTP mirror,
sha256-verified, parsed, and its shape checked against the paper / SOURCE.txt."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from dlm_bench.data import DATASETS, get_spec, load_dataset
from dlm_bench.data.fetch import cached_path

# shapes from the papers' tables and the SOURCE.txt notes (independent of the registry)
EXPECTED = {
    "pol": (15000, 26), "kin40k": (40000, 8), "cadata": (20640, 8), "cadata_fp": (20640, 8),
    "creep": (2066, 30), "banana": (5300, 2), "twonorm": (7400, 20), "ringnorm": (7400, 20),
    "thyroid": (3772, 6), "abalone": (4177, 9), "ucsdpeds1l": (4000, 30), "flares": (1065, 24),
    "stock": (950, 9), "bank": (8192, 32), "boston_savigp": (5 * 506, 13), "creep_savigp": (2066, 30),
    "abalone_savigp": (4177, 10), "usps479": (5 * 2465, 256),
    # the copies added for issue 54 (SOURCE.txt: musk verbatim; madelon rebuilt, madelon.t verbatim; cpusmall
    # CRLF->LF; space_ga converted)
    "musk": (6598, 166), "madelon": (2000, 500), "madelon_fp": (2600, 500), "cpusmall": (8192, 12),
    "space_ga": (3107, 6),
}


def _manifest(shared_data):
    with open(shared_data / "MANIFEST.tsv") as f:
        return {row["file"]: row for row in csv.DictReader(f, delimiter="\t")}


def test_registry_hashes_and_urls_match_manifest(shared_data):
    """A verbatim offline copy pins its sha256; a copy the mirror rebuilt or converted (its MANIFEST repo column
    says so) is not the upstream file, so its hash stays unpinned; a pin without an offline copy cites evidence."""
    manifest = _manifest(shared_data)
    checked = 0
    for spec in DATASETS.values():
        for rf in spec.files:
            row = manifest.get(rf.mirror_path)
            if row is None:
                assert rf.known_hash is None or rf.evidence, f"{rf.mirror_path}: pinned with no offline copy and no evidence"
                continue
            if " (" in row["repo"]:  # "(rebuilt ...)", "(converted ...)", "(CRLF->LF ...)": numbers right, bytes not
                assert rf.known_hash is None, f"{rf.mirror_path}: the mirror's copy is not upstream's bytes"
                continue
            assert rf.sha256 == row["sha256"], rf.mirror_path
            if rf.url.startswith("https://raw.githubusercontent.com/") and " (" not in row["path"]:
                assert rf.url == f"https://raw.githubusercontent.com/{row['repo']}/{row['commit']}/{row['path']}"
            checked += 1
    assert checked >= 30


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fetch_verify_parse_over_http(name, shared_data, cache, serve, monkeypatch):
    monkeypatch.setenv("DLM_BENCH_MIRROR", serve(shared_data))
    spec = get_spec(name)
    ds = load_dataset(name)
    assert ds.X.shape == EXPECTED[name] and ds.y.shape == (EXPECTED[name][0],)
    assert ds.X.dtype == np.float64 and np.isfinite(ds.X).all() and np.isfinite(ds.y).all()
    for rf in spec.files:  # what landed in the cache is byte-identical to the offline copy
        assert cached_path(rf).read_bytes() == (shared_data / rf.mirror_path).read_bytes()


def test_dataset_contents_spot_checks(shared_data, cache, monkeypatch):
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(shared_data))  # a plain directory mirror
    ab = load_dataset("abalone")
    raw = np.loadtxt(shared_data / "abalone/raw/abalone.data", delimiter=",")
    # L-1 dummy coding: M is the all-zero code, F and I one column each
    np.testing.assert_array_equal(ab.X[:, 0], raw[:, 1])
    np.testing.assert_array_equal(ab.X[:, 1], raw[:, 2])
    np.testing.assert_array_equal(ab.y, raw[:, 10])
    th = load_dataset("thyroid")
    assert th.y.sum() == 3772 - 3488  # UCI ann-train: 93 hyper + 191 hypo, 3488 normal
    ring = load_dataset("ringnorm")
    assert np.abs(ring.X).max() < 20  # KEEL's x1000 scaling undone (Delve values are O(1))
    banana = load_dataset("banana")
    assert (banana.y == 1).sum() in (2924, 2376)
    sp = load_dataset("usps479")
    assert set(np.unique(sp.y)) == {0.0, 1.0, 2.0} and len(sp.fixed_splits) == 5
    assert all(len(tr) == 1233 and len(te) == 1232 for tr, te in sp.fixed_splits)
    bank = load_dataset("bank")
    assert np.bincount(bank.y.astype(int))[1:].min() >= 819  # 10 equal-frequency levels


def test_shipped_boston_and_snelson_match_offline_copies(shared_data, cache):
    b = load_dataset("boston")
    np.testing.assert_array_equal(b.X, np.loadtxt(shared_data / "boston/raw/housing.data")[:, :13])
    s = load_dataset("snelson")
    assert s.X.shape == (200, 1)
    np.testing.assert_array_equal(s.y, np.loadtxt(shared_data / "snelson/gpflow/snelson_train_outputs.dat"))
    assert not cache.exists()  # shipped data never touches the cache


def test_new_mirror_copies_contents(shared_data, cache, monkeypatch):
    """UCI / NIPS 2003 / Delve facts typed in here: musk v2 has 1017 musks of 6598; madelon 1000/1000 and
    madelon.t 300/300 labels, integer features; cpusmall and space_ga have no missing feature."""
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(shared_data))
    musk = load_dataset("musk")
    assert musk.y.sum() == 1017 and set(np.unique(musk.y)) == {0.0, 1.0}
    assert (musk.X == np.round(musk.X)).all()
    mad = load_dataset("madelon_fp")
    assert mad.y[:2000].sum() == 1000 and mad.y[2000:].sum() == 300
    assert (mad.X == np.round(mad.X)).all() and mad.X.min() >= 0 and mad.X.max() <= 999
    cpu = load_dataset("cpusmall")
    assert (cpu.X != 0).any(axis=0).all() and cpu.y.min() >= 0 and cpu.y.max() <= 99  # usr: % CPU time
    space = load_dataset("space_ga")
    assert (space.X != 0).all() and np.isfinite(space.y).all()
