"""Fixtures for the data tests: a temporary cache, the project's offline copies, a local HTTP server."""

from __future__ import annotations

import functools
import http.server
import os
import socket
import threading
from pathlib import Path

import importlib

import pytest

fetch_mod = importlib.import_module("dlm_bench.data.fetch")  # the package re-exports a function of the same name



# `shared_data` (../shared/data beside the clone, skipped where absent) comes from tests/conftest.py


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("DLM_BENCH_DATA", str(d))
    monkeypatch.delenv("DLM_BENCH_MIRROR", raising=False)
    monkeypatch.setattr(fetch_mod, "BACKOFF_S", 0.01)
    return d


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; under /truncated/<path> it announces the full length but sends half and hangs up."""

    def log_message(self, *args):  # keep test output quiet
        pass

    def do_GET(self):
        if self.path.startswith("/truncated/"):
            target = Path(self.directory) / self.path[len("/truncated/"):]
            body = target.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        super().do_GET()


@pytest.fixture
def serve():
    """serve(folder) -> base URL of a ThreadingHTTPServer on 127.0.0.1 serving that folder."""
    servers = []

    def start(folder: Path) -> str:
        handler = functools.partial(_Handler, directory=str(folder))
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def closed_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"
