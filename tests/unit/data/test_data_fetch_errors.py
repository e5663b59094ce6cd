"""Error paths of fetching: 404, wrong bytes, connection refused, interrupted transfer; mirror,
cache and `fetch()` / `datasets_table()` behaviour."""

from __future__ import annotations

import hashlib
import importlib
import os
from pathlib import Path

import pytest

from dlm_bench.data import DATASETS, DatasetError, DatasetSpec, RemoteFile, datasets_table, fetch, fetch_file

fetch_mod = importlib.import_module("dlm_bench.data.fetch")

PAYLOAD = b"0.5 1.5\n2.5 3.5\n" * 5000  # ~80 kB, large enough to be cut mid-transfer
SHA = hashlib.sha256(PAYLOAD).hexdigest()


def _rf(url="http://example.invalid/x/table.txt", sha=SHA, mirror_path="toy/table.txt") -> RemoteFile:
    return RemoteFile(url, sha, mirror_path)


@pytest.fixture
def mirror_dir(tmp_path) -> Path:
    d = tmp_path / "mirror"
    (d / "toy").mkdir(parents=True)
    (d / "toy" / "table.txt").write_bytes(PAYLOAD)
    (d / "toy" / "bad.txt").write_bytes(PAYLOAD[:-1] + b"9")
    return d


def _no_partial_files(cache: Path):
    return [p for p in cache.rglob("*") if p.is_file()] if cache.exists() else []


def test_download_verifies_and_caches(cache, mirror_dir, serve):
    url = serve(mirror_dir)
    [path] = fetch_file(_rf(url=f"{url}/toy/table.txt"))
    assert path == cache / "toy" / "table.txt" and path.read_bytes() == PAYLOAD
    # second call is served from the cache: works with the server gone
    [again] = fetch_file(_rf(url="http://127.0.0.1:9/unreachable"))
    assert again == path


def test_http_404_names_url_mirror_and_cache(cache, mirror_dir, serve):
    url = f"{serve(mirror_dir)}/toy/missing.txt"
    with pytest.raises(DatasetError) as e:
        fetch_file(_rf(url=url))
    msg = str(e.value)
    assert "\n" not in msg and "HTTP 404" in msg and url in msg and "DLM_BENCH_MIRROR" in msg and str(cache) in msg
    assert _no_partial_files(cache) == []


def test_connection_refused_is_one_line_offline_error(cache, closed_port_url, monkeypatch):
    calls = []
    real = fetch_mod.requests.get
    monkeypatch.setattr(fetch_mod.requests, "get", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    url = f"{closed_port_url}/toy/table.txt"
    with pytest.raises(DatasetError) as e:
        fetch_file(_rf(url=url))
    msg = str(e.value)
    assert "\n" not in msg and url in msg and "DLM_BENCH_MIRROR" in msg and str(cache) in msg and "no connection" in msg
    assert len(calls) == fetch_mod.RETRIES  # transient failures are retried
    assert _no_partial_files(cache) == []


def test_checksum_mismatch_names_file_hashes_and_removes_it(cache, mirror_dir, serve):
    url = f"{serve(mirror_dir)}/toy/bad.txt"
    with pytest.raises(DatasetError) as e:
        fetch_file(_rf(url=url))
    msg = str(e.value)
    actual = hashlib.sha256((mirror_dir / "toy" / "bad.txt").read_bytes()).hexdigest()
    assert "\n" not in msg and "toy/table.txt" in msg and SHA in msg and actual in msg and "removed" in msg
    assert _no_partial_files(cache) == []


def test_checksum_mismatch_from_directory_mirror(cache, mirror_dir, monkeypatch):
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(mirror_dir))
    rf = RemoteFile("http://unused", SHA, "toy/bad.txt")
    with pytest.raises(DatasetError, match="expected sha256"):
        fetch_file(rf)
    assert _no_partial_files(cache) == []


def test_interrupted_transfer_never_counts_as_cached(cache, mirror_dir, serve):
    url = f"{serve(mirror_dir)}/truncated/toy/table.txt"
    with pytest.raises(DatasetError, match="interrupted|checksum"):
        fetch_file(_rf(url=url))
    assert _no_partial_files(cache) == []
    assert not fetch_mod.is_cached(_rf())


def test_interrupted_transfer_without_known_hash(cache, mirror_dir, serve):
    # Content-Length is enforced, so even an unverifiable file is not kept when cut short
    url = f"{serve(mirror_dir)}/truncated/toy/table.txt"
    with pytest.raises(DatasetError):
        fetch_file(_rf(url=url, sha=None))
    assert _no_partial_files(cache) == []


def test_http_mirror_replaces_origin(cache, mirror_dir, serve, monkeypatch):
    monkeypatch.setenv("DLM_BENCH_MIRROR", serve(mirror_dir) + "/")
    [path] = fetch_file(_rf())  # canonical URL is unreachable; the mirror serves toy/table.txt
    assert path.read_bytes() == PAYLOAD


def test_directory_mirror_missing_file(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "empty"))
    with pytest.raises(DatasetError) as e:
        fetch_file(_rf())
    assert "DLM_BENCH_MIRROR" in str(e.value) and "toy/table.txt" in str(e.value)


def test_default_cache_is_per_user_os_cache(monkeypatch):
    monkeypatch.delenv("DLM_BENCH_DATA", raising=False)
    assert fetch_mod.cache_dir() == Path(fetch_mod.pooch.os_cache("dlm_bench"))
    monkeypatch.setenv("DLM_BENCH_DATA", "/some/where")
    assert fetch_mod.cache_dir() == Path("/some/where")


def test_fetch_reports_per_dataset(cache, mirror_dir, serve, monkeypatch):
    monkeypatch.setitem(DATASETS, "toy", DatasetSpec(
        "toy", "regression", ("test",), (10000, 1), lambda p: (__import__("numpy").loadtxt(p[0])[:, :1],
                                                                  __import__("numpy").loadtxt(p[0])[:, 1], ["a"]),
        files=(_rf(),)))
    monkeypatch.setenv("DLM_BENCH_MIRROR", serve(mirror_dir))
    out = fetch(["toy", "boston", "nope"])
    assert [(n, ok) for n, ok, _ in out] == [("toy", True), ("boston", True), ("nope", False)]
    assert "unknown dataset 'nope'" in out[2][2]
    table = datasets_table()
    line = next(l for l in table.splitlines() if l.startswith("toy "))
    assert "10000 x 1" in line and line.endswith("cached") and "not cached" not in line
    assert next(l for l in table.splitlines() if l.startswith("boston ")).endswith("shipped")
    assert next(l for l in table.splitlines() if l.startswith("pol ")).endswith("in mirror")
    assert table.splitlines()[0].split() == ["name", "task", "N", "x", "D", "papers", "availability"]
