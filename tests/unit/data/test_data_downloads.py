"""Downloads a user can live with (issue 54) and a cache that may be read-only (issue 58), against local HTTP servers
on 127.0.0.1: zip-wrapped files, hand-placed files and dataset.path, the size line, fetch --all without multi-GB
files, bz2 heads streamed and stopped, 429 + Retry-After, Range resume, errors that say what happened."""

from __future__ import annotations

import bz2
import errno
import hashlib
import http.server
import importlib
import io
import os
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dlm_bench.cli import main
from dlm_bench.data import DATASETS, DatasetError, DatasetSpec, RemoteFile, availability, require
from dlm_bench.data.api import fetch, load_dataset, load_spec

fetch_mod = importlib.import_module("dlm_bench.data.fetch")
cache_mod = importlib.import_module("dlm_bench.data.cache")
api_mod = importlib.import_module("dlm_bench.data.api")

ROWS = 300
PAYLOAD = b"".join(f"{i * 0.5:.1f} {i * 1.5:.1f}\n".encode() for i in range(ROWS))
SHA = "sha256:" + hashlib.sha256(PAYLOAD).hexdigest()


def _parser(paths):
    a = np.loadtxt(paths[0], ndmin=2)
    return a[:, :1], a[:, 1], ["x"]


def _toy(monkeypatch, rf: RemoteFile, rows: int = ROWS, name: str = "toy") -> DatasetSpec:
    spec = DatasetSpec(name, "regression", ("test",), (rows, 1), _parser, files=(rf,))
    monkeypatch.setitem(DATASETS, name, spec)
    return spec


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


class Server:
    """A scripted server: `routes[path]` is bytes (served, honouring Range) or a callable(handler)."""

    def __init__(self):
        self.routes, self.requests, self.sent = {}, [], {}
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.requests.append((self.path, self.headers.get("Range")))
                route = outer.routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                if callable(route):
                    route(self)
                    return
                outer.serve_bytes(self, route)

            def do_HEAD(self):  # the sweep's reachability / size probe (data.locate(probe=True))
                outer.requests.append((self.path, "HEAD"))
                route = outer.routes.get(self.path)
                if not isinstance(route, bytes):
                    self.send_error(404 if route is None else 405)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(route)))
                self.end_headers()

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.srv.server_address[1]}"

    def serve_bytes(self, h, body: bytes, chunk: int = 1 << 16, delay: float = 0.0):
        rng = h.headers.get("Range")
        start = int(rng.split("=")[1].rstrip("-")) if rng else 0
        h.send_response(206 if rng else 200)
        h.send_header("Content-Length", str(len(body) - start))
        h.end_headers()
        sent = 0
        try:
            for i in range(start, len(body), chunk):
                h.wfile.write(body[i:i + chunk])
                sent += len(body[i:i + chunk])
                if delay:
                    time.sleep(delay)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.sent[h.path] = self.sent.get(h.path, 0) + sent

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def _no_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


# ------------------------------------------------------------------------------------------ zip wrapper, by hand
def test_canonical_url_serving_a_zip_around_the_file(cache, server, monkeypatch):
    """musk: the UCI URL serves musk+version+2.zip; the cache (and a mirror) keep clean2.data.Z itself."""
    server.routes["/static/musk+version+2.zip"] = _zip({"clean1.data.Z": b"other", "clean2.data.Z": PAYLOAD})
    spec = _toy(monkeypatch, RemoteFile(f"{server.url}/static/musk+version+2.zip", SHA, "toy/clean2.data.Z",
                                        member="clean2.data.Z"))
    ds = load_spec(spec)
    assert ds.X.shape == (ROWS, 1) and (cache / "toy/clean2.data.Z").read_bytes() == PAYLOAD
    assert not (cache / "toy/musk+version+2.zip").exists() and not (cache / ".partial").exists()


def test_hand_placed_archive_at_the_cache_path_is_used(cache, monkeypatch):
    """Before: is_cached wanted the unpacked members too, so a zip put there by hand was ignored and the error told
    the user to put it where it already was. Now it is hash-checked, unpacked and used, with no network."""
    rf = RemoteFile("http://127.0.0.1:9/unreachable.zip", None, "toy/t.zip", unpack="zip", members=("d/t.txt",))
    spec = _toy(monkeypatch, rf)
    assert "download" in availability("toy")
    (cache / "toy").mkdir(parents=True)
    (cache / "toy/t.zip").write_bytes(_zip({"d/t.txt": PAYLOAD}))
    assert availability("toy") == "placed by hand"
    ds = load_spec(spec)
    assert ds.X.shape == (ROWS, 1) and (cache / "toy/t.zip.unzip/d/t.txt").read_bytes() == PAYLOAD
    assert availability("toy") == "cached"


def test_hand_placed_wrapper_zip_and_a_wrong_one(cache, monkeypatch):
    rf = RemoteFile("http://127.0.0.1:9/pub/musk+version+2.zip", SHA, "toy/clean2.data.Z", member="clean2.data.Z")
    spec = _toy(monkeypatch, rf)
    (cache / "toy").mkdir(parents=True)
    (cache / "toy/musk+version+2.zip").write_bytes(_zip({"clean2.data.Z": PAYLOAD[:-4] + b"9.9\n"}))
    with pytest.raises(DatasetError, match="checksum mismatch") as e:
        load_spec(spec)
    assert "musk+version+2.zip" in str(e.value) and SHA in str(e.value)
    (cache / "toy/musk+version+2.zip").write_bytes(_zip({"clean2.data.Z": PAYLOAD}))
    assert load_spec(spec).X.shape == (ROWS, 1)
    assert (cache / "toy/clean2.data.Z").read_bytes() == PAYLOAD


def test_offline_error_names_where_to_put_the_file(cache, closed_port_url, monkeypatch):
    monkeypatch.setattr(fetch_mod, "RETRIES", 1)
    spec = _toy(monkeypatch, RemoteFile(f"{closed_port_url}/a/musk+version+2.zip", SHA, "toy/clean2.data.Z",
                                        member="clean2.data.Z"))
    with pytest.raises(DatasetError) as e:
        load_spec(spec)
    msg = str(e.value)
    assert "no connection" in msg and str(cache / "toy/clean2.data.Z") in msg and str(cache / "toy/musk+version+2.zip") in msg


def test_dataset_path_names_a_local_copy(cache, tmp_path, monkeypatch):
    mine = tmp_path / "downloads" / "t.txt"
    mine.parent.mkdir()
    mine.write_bytes(PAYLOAD)
    _toy(monkeypatch, RemoteFile("http://127.0.0.1:9/t.txt", SHA, "toy/t.txt"))
    ds = load_dataset("toy", path=mine)  # a file, or the folder holding it
    assert ds.X.shape == (ROWS, 1) and (cache / "toy/t.txt").read_bytes() == PAYLOAD
    mine.write_bytes(PAYLOAD.replace(b"1.5", b"2.5", 1))
    with pytest.raises(DatasetError, match="checksum mismatch"):
        load_dataset("toy", path=mine.parent)
    with pytest.raises(DatasetError, match="no such file or folder"):
        load_dataset("toy", path=tmp_path / "nope")


# ------------------------------------------------------------------------------------------ size, --all, heads
def test_size_printed_before_a_large_download(cache, server, monkeypatch, capsys):
    monkeypatch.setattr(fetch_mod, "ANNOUNCE_MB", 0.01)  # PAYLOAD is 0.0026 MB
    server.routes["/t.txt"] = PAYLOAD * 10
    spec = _toy(monkeypatch, RemoteFile(f"{server.url}/t.txt", None, "toy/t.txt"), rows=10 * ROWS)
    load_spec(spec)
    err = capsys.readouterr().err
    assert f"downloading toy/t.txt: {round(len(PAYLOAD) * 10 / 1e3)} kB from {server.url}/t.txt" in err


def test_fetch_all_leaves_multi_gb_files_out_unless_large(cache, server, monkeypatch):
    server.routes["/t.txt"] = PAYLOAD
    big = RemoteFile(f"{server.url}/t.txt", None, "big/t.txt", large_download=True, approx_mb=12000)
    small = RemoteFile(f"{server.url}/t.txt", None, "small/t.txt")
    monkeypatch.setattr(api_mod, "DATASETS", {
        "big": DatasetSpec("big", "regression", ("t",), (ROWS, 1), _parser, files=(big,)),
        "small": DatasetSpec("small", "regression", ("t",), (ROWS, 1), _parser, files=(small,))})
    monkeypatch.setitem(DATASETS, "big", api_mod.DATASETS["big"])
    monkeypatch.setitem(DATASETS, "small", api_mod.DATASETS["small"])
    out = dict((n, (ok, m)) for n, ok, m in fetch("all"))
    assert out["small"][0] and "in " in out["small"][1]
    assert out["big"] == (True, "skipped: multi-GB download (t.txt ~12,000 MB); fetch it by name or with --all --large")
    assert not (cache / "big").exists()
    assert "x 1 in" in dict((n, m) for n, _, m in fetch("all", large=True))["big"]


def _libsvm_bz2(n: int) -> tuple[bytes, list[bytes]]:
    rng = np.random.default_rng(3)
    lines = [(f"{1 if i % 2 else -1:+d} " + " ".join(f"{j}:{v:.6f}" for j, v in
              zip(range(1, 41), rng.normal(size=40))) + "\n").encode() for i in range(n)]
    return bz2.compress(b"".join(lines), compresslevel=1), lines


def test_epsilon_head_is_streamed_and_stopped(cache, server, monkeypatch):
    """Only the first head_lines lines are read: the server is cut off long before the end of the file."""
    body, lines = _libsvm_bz2(40000)  # ~ 7 MB bz2 in 100 kB blocks
    server.routes["/eps.bz2"] = lambda h: server.serve_bytes(h, body, delay=0.002)  # a link, not loopback speed
    rf = RemoteFile(f"{server.url}/eps.bz2", None, "eps/eps.bz2", head_lines=50)
    spec = DatasetSpec("eps", "binary", ("t",), (50, 40), lambda p: _libsvm(p, 40), files=(rf,))
    monkeypatch.setitem(DATASETS, "eps", spec)
    ds = load_spec(spec)
    expect = np.array([[float(t.split(b":")[1]) for t in ln.split()[1:]] for ln in lines[:50]])
    np.testing.assert_array_equal(ds.X, expect)
    assert (cache / "eps/eps.head50").read_bytes() == b"".join(lines[:50])
    deadline = time.time() + 10  # the server thread counts its bytes when the client has cut the connection
    while "/eps.bz2" not in server.sent and time.time() < deadline:
        time.sleep(0.05)
    assert server.sent["/eps.bz2"] < len(body) / 2, (server.sent, len(body))
    assert not (cache / "eps/eps.bz2").exists()
    # a full file put by hand is read the same way, with no server
    server.routes.clear()
    (cache / "eps/eps.head50").unlink()
    (cache / "eps/eps.head50.sha256.json").unlink()
    (cache / "eps/eps.bz2").write_bytes(body)
    np.testing.assert_array_equal(load_spec(spec).X, expect)


def _libsvm(paths, d):
    from dlm_bench.data.parsers import read_libsvm

    X, y = read_libsvm(paths[0], d)
    return X, (y > 0).astype(float), [f"f{i}" for i in range(d)]


# ------------------------------------------------------------------------------------------ 429, Range
def test_429_is_retried_after_retry_after(cache, server, monkeypatch):
    waits = []
    monkeypatch.setattr(fetch_mod.time, "sleep", waits.append)
    hits = []

    def limited(h):
        hits.append(1)
        if len(hits) == 1:
            h.send_response(429)
            h.send_header("Retry-After", "7")
            h.send_header("Content-Length", "0")
            h.end_headers()
        else:
            server.serve_bytes(h, PAYLOAD)

    server.routes["/t.txt"] = limited
    spec = _toy(monkeypatch, RemoteFile(f"{server.url}/t.txt", SHA, "toy/t.txt"))
    assert load_spec(spec).X.shape == (ROWS, 1)
    assert waits == [7.0] and len(hits) == 2


def test_429_beyond_the_limit_says_so(cache, server, monkeypatch):
    def limited(h):
        h.send_response(429)
        h.send_header("Retry-After", "86400")
        h.send_header("Content-Length", "0")
        h.end_headers()

    server.routes["/t.txt"] = limited
    spec = _toy(monkeypatch, RemoteFile(f"{server.url}/t.txt", SHA, "toy/t.txt"))
    with pytest.raises(DatasetError, match="HTTP 429, Retry-After 86400 s"):
        load_spec(spec)


def test_interrupted_transfer_resumes_with_range(cache, server, monkeypatch):
    body = PAYLOAD * 400
    sha = "sha256:" + hashlib.sha256(body).hexdigest()
    calls = []

    def flaky(h):
        calls.append(h.headers.get("Range"))
        if len(calls) == 1:  # announce everything, send 40 %, hang up
            h.send_response(200)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body[: len(body) * 2 // 5])
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(2)
            return
        server.serve_bytes(h, body)

    server.routes["/big.txt"] = flaky
    monkeypatch.setattr(fetch_mod, "RETRIES", 1)  # the first process gives up ...
    monkeypatch.setattr(fetch_mod, "RESUME_MIN_BYTES", 0)  # ... and a "large" partial is kept
    spec = _toy(monkeypatch, RemoteFile(f"{server.url}/big.txt", sha, "toy/big.txt"), rows=400 * ROWS)
    with pytest.raises(DatasetError, match="transfer interrupted"):
        load_spec(spec)
    part = cache / ".partial/toy/big.txt"
    kept = part.stat().st_size  # the whole 64 kB chunks that arrived
    assert 0 < kept <= len(body) * 2 // 5 and part.read_bytes() == body[:kept]
    assert not (cache / "toy/big.txt").exists()
    assert load_spec(spec).X.shape == (400 * ROWS, 1)  # the next one asks for the rest
    assert calls == [None, f"bytes={kept}-"]
    assert (cache / "toy/big.txt").read_bytes() == body and not part.exists()


# ------------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("mirror,says", [("http://", "is not a usable URL (no host)"),
                                         ("htp://host/data", "bad download URL"),
                                         ("http://[::1/data", "is not a usable URL (Invalid IPv6 URL)")])
def test_bad_mirror_url_is_not_a_checksum_mismatch(mirror, says, cache, monkeypatch):
    """Before, requests' InvalidURL / MissingSchema (ValueErrors) were caught as pooch's hash mismatch."""
    monkeypatch.setenv("DLM_BENCH_MIRROR", mirror)
    spec = _toy(monkeypatch, RemoteFile("http://unused/t.txt", SHA, "toy/t.txt"))
    with pytest.raises(DatasetError) as e:
        load_spec(spec)
    assert says in str(e.value) and "DLM_BENCH_MIRROR" in str(e.value) and "checksum" not in str(e.value)


def test_full_disk_is_not_a_network_error(cache, server, monkeypatch):
    server.routes["/t.txt"] = PAYLOAD
    real_open = open

    def full(path, mode="r", *a, **k):
        if ".partial" in str(path) and "w" in mode or "a" in mode:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr(fetch_mod, "open", full, raising=False)
    spec = _toy(monkeypatch, RemoteFile(f"{server.url}/t.txt", SHA, "toy/t.txt"))
    with pytest.raises(DatasetError) as e:
        load_spec(spec)
    msg = str(e.value)
    assert "No space left on device" in msg and "errno 28" in msg and "network" not in msg and "\n" not in msg
    assert not (cache / "toy/t.txt").exists()


# ------------------------------------------------------------------------------------------ issue 58: the cache
def test_cache_that_is_a_regular_file_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    f = tmp_path / "cachefile"
    f.write_text("x")
    monkeypatch.setenv("DLM_BENCH_DATA", str(f))
    monkeypatch.delenv("DLM_BENCH_MIRROR", raising=False)
    assert main(["fetch", "pol"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a file, not a folder" in err[0] and "Traceback" not in err[0]


def test_read_only_cache_refused_in_one_line(cache, monkeypatch):
    cache.mkdir()
    monkeypatch.setattr(fetch_mod.os, "access", lambda p, mode: False)  # what a chmod 555 folder answers (not root)
    spec = _toy(monkeypatch, RemoteFile("http://127.0.0.1:9/t.txt", SHA, "toy/t.txt"))
    with pytest.raises(DatasetError, match="is read-only and a file must be fetched into it"):
        load_spec(spec)


def test_read_only_cache_holding_every_file_loads_and_creates_nothing(cache, monkeypatch, tmp_path):
    mirror = tmp_path / "m"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy/t.txt").write_bytes(PAYLOAD)
    (mirror / "toy/u.txt").write_bytes(PAYLOAD)
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(mirror))
    spec = _toy(monkeypatch, RemoteFile("http://unused/t.txt", SHA, "toy/t.txt"))
    spec2 = _toy(monkeypatch, RemoteFile("http://unused/u.txt", None, "toy/u.txt"), name="toy2")
    load_spec(spec), load_spec(spec2)
    os.remove(cache / "toy/u.txt.sha256.json")  # an unpinned file whose record could not be written
    before = sorted(str(p) for p in cache.rglob("*"))

    def no_writes(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(fetch_mod.os, "access", lambda p, mode: False)
    monkeypatch.setattr(cache_mod, "staging_area", no_writes)
    monkeypatch.setattr(cache_mod, "write_sidecar", no_writes)
    assert load_spec(spec).X.shape == load_spec(spec2).X.shape == (ROWS, 1)
    assert sorted(str(p) for p in cache.rglob("*")) == before and not (cache / ".staging").exists()


# ------------------------------------------------------------------------------------------ availability / require
def test_availability_and_require(cache, tmp_path, monkeypatch):
    monkeypatch.setitem(DATASETS, "nourl", DatasetSpec("nourl", "regression", ("t",), (1, 1), _parser,
                                                       files=(RemoteFile("", None, "nourl/x.txt"),)))
    _toy(monkeypatch, RemoteFile("http://x.invalid/t.txt", SHA, "toy/t.txt", size=250_000_000))
    assert availability("boston") == "shipped"
    assert availability("toy") == "download of 250 MB"
    assert availability("nourl") == "no known source (no URL known)"
    require(["boston", "toy", "csv"])
    with pytest.raises(DatasetError) as e:
        require(["nourl", "toy", "boston"])
    assert str(e.value).startswith("1 dataset(s) cannot be had here: nourl: nourl/x.txt (no URL known; put the file at")
    (tmp_path / "m").mkdir()
    monkeypatch.setenv("DLM_BENCH_MIRROR", str(tmp_path / "m"))
    assert availability("toy").startswith("no known source (not in DLM_BENCH_MIRROR=")
    with pytest.raises(DatasetError, match=r"^2 dataset\(s\) cannot be had here: nourl: .* \| toy: toy/t.txt \(not in"):
        require(["nourl", "toy"])
    (tmp_path / "m/toy").mkdir()
    (tmp_path / "m/toy/t.txt").write_bytes(PAYLOAD)
    assert availability("toy") == "in mirror"
    load_dataset("toy")
    assert availability("toy") == "cached"


# ------------------------------------------------------------------------------------------ locate(probe=True)
def test_locate_probes_once_and_the_sweep_check_accepts_a_hand_placed_archive(cache, server, monkeypatch):
    """data.locate is the one answer to "where would this dataset come from": `datasets` (no network) and the
    sweep's check before any job (probe=True). Before, the sweep had its own copy that did not know hand-placed
    files: musk's zip put in the cache by hand was "placed by hand" in `datasets`, and the sweep refused it offline."""
    from dlm_bench.data import locate
    from dlm_bench.sweeps.preflight import preflight
    from dlm_bench.sweeps.plan import PlannedPoint

    server.routes["/t.zip"] = _zip({"d/t.txt": PAYLOAD})
    _toy(monkeypatch, RemoteFile(f"{server.url}/t.zip", None, "toy/t.zip", unpack="zip", members=("d/t.txt",)))
    probed = locate("toy", probe=True)  # one HEAD: its Content-Length is the size
    assert server.requests == [("/t.zip", "HEAD")]
    assert (probed.state, probed.nbytes, probed.phrase) == ("download", len(server.routes["/t.zip"]),
                                                            "download, size unknown")
    monkeypatch.setitem(DATASETS, "gone", DatasetSpec("gone", "regression", ("t",), (ROWS, 1), _parser, files=(
        RemoteFile("http://127.0.0.1:9/gone.zip", None, "gone/t.zip", unpack="zip", members=("d/t.txt",)),)))
    offline = locate("gone", probe=True)
    assert offline.state == "unavailable" and offline.reason.startswith("cannot reach http://127.0.0.1:9/gone.zip (")
    assert locate("gone").state == "download"  # without the probe nothing is sent
    (cache / "gone").mkdir(parents=True)
    (cache / "gone/t.zip").write_bytes(_zip({"d/t.txt": PAYLOAD}))
    by_hand = locate("gone", probe=True)  # the unreachable URL is not asked: nothing needs it
    assert (by_hand.state, by_hand.phrase, by_hand.nbytes) == ("hand", "placed by hand", 0) and by_hand.needs_fetch()
    point = PlannedPoint("dataset=gone", "gone_run", "new", config={"dataset": {"name": "gone"}})
    plan, error = preflight([point], fetch=True)  # fetches (checks and unpacks) the hand-placed zip, offline
    assert error is None and plan[0].state == "new"
    assert locate("gone").state == "cached"
