"""Locks that heal (a dead, reused or pre-reboot pid cannot hold a lock) and the pretrain store's bounded wait and
corrupt-state rebuild (issue 27)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time

import pytest
import torch

from dlm_bench.training.stage1_store import PretrainBusy, PretrainStore
from dlm_bench.training.trainer import TrainResult
from dlm_bench.util import locks
from dlm_bench.util.locks import LOCK_NAME, RunLock, holder, proc_start_time

linux_proc = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs /proc")


@pytest.fixture
def sleeper():
    """A live process that is not us (its pid is 'reused' by the tests below)."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield p
    p.kill()
    p.wait()


def write_lock(d, **info):
    d.mkdir(parents=True, exist_ok=True)
    (d / LOCK_NAME).write_text(json.dumps(info))


@linux_proc
def test_start_time_is_field_22_of_proc_stat(sleeper):
    # independent reading: /proc/<pid>/stat split on spaces (python's comm has no space or parenthesis)
    fields = open(f"/proc/{sleeper.pid}/stat").read().split()
    assert proc_start_time(sleeper.pid) == int(fields[21])
    later = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        assert proc_start_time(later.pid) >= proc_start_time(sleeper.pid)
    finally:
        later.wait()
    assert proc_start_time(later.pid) is None  # gone


@linux_proc
def test_a_new_lock_records_host_pid_start_and_boot(tmp_path):
    with RunLock(tmp_path) as got:
        assert got
        info = json.loads((tmp_path / LOCK_NAME).read_text())
    assert info["host"] == socket.gethostname() and info["pid"] == os.getpid()
    assert info["start"] == int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
    assert info["boot"] == open("/proc/sys/kernel/random/boot_id").read().strip()


def test_a_lock_names_the_sweep_of_its_holder(tmp_path, monkeypatch):
    """A sweep's jobs record its id (DLM_BENCH_SWEEP_ID) and holder() returns it: a job tells a point its own
    sweep trains from one another sweep does (sweeps/job.py). Outside a sweep the field is absent."""
    with RunLock(tmp_path / "a"):
        assert "sweep" not in json.loads((tmp_path / "a" / LOCK_NAME).read_text())
        assert holder(tmp_path / "a") == {"host": socket.gethostname(), "pid": os.getpid()}
    monkeypatch.setenv(locks.SWEEP_ID_ENV, "sweep-1")
    with RunLock(tmp_path / "b"):
        assert json.loads((tmp_path / "b" / LOCK_NAME).read_text())["sweep"] == "sweep-1"
        assert holder(tmp_path / "b") == {"host": socket.gethostname(), "pid": os.getpid(), "sweep": "sweep-1"}


@linux_proc
@pytest.mark.parametrize("change,held", [
    ({}, True),                                  # the process that wrote it
    ({"start": -1}, False),                      # the pid now belongs to a process started at another time
    ({"boot": "another-boot"}, False),           # written before a reboot
    ({"start": None, "boot": None}, True),       # old format: host and pid only, pid alive
    ({"host": "elsewhere"}, True),               # another host cannot be checked
])
def test_holder_checks_the_lock_identity(tmp_path, sleeper, change, held):
    info = {"host": socket.gethostname(), "pid": sleeper.pid, "start": proc_start_time(sleeper.pid),
            "boot": locks.boot_id(), **change}
    write_lock(tmp_path, **{k: v for k, v in info.items() if v is not None})
    assert (holder(tmp_path) is not None) is held
    assert RunLock(tmp_path).acquire() is (not held)  # a stale lock is taken over at once


def test_old_format_lock_with_a_dead_pid_is_stale(tmp_path):
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    write_lock(tmp_path, host=socket.gethostname(), pid=p.pid)
    assert holder(tmp_path) is None


# --- pretrain store ------------------------------------------------------------------------------------------


def linear():
    torch.manual_seed(0)
    return torch.nn.Linear(2, 1).double()


def fit_for(module, calls, value=1.5):
    def fit():
        calls.append(1)
        with torch.no_grad():
            module.weight.fill_(value)
        return TrainResult(iterations=7, converged=True)
    return fit


def test_state_has_a_sha256_sidecar(tmp_path):
    store, calls, m = PretrainStore(tmp_path), [], linear()
    store.get_or_train("k", m, fit_for(m, calls))
    d = tmp_path / "_pretrain" / "k"
    digest, name = (d / "state.pt.sha256").read_text().split()
    assert name == "state.pt" and digest == hashlib.sha256((d / "state.pt").read_bytes()).hexdigest()
    again = linear()
    result, reused = PretrainStore(tmp_path).get_or_train("k", again, fit_for(again, calls))
    assert reused and calls == [1] and torch.equal(again.weight, torch.full((1, 2), 1.5, dtype=torch.float64))


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage_legacy"])
def test_a_corrupt_state_is_rebuilt_and_logged_in_one_line(tmp_path, capsys, damage):
    calls, m = [], linear()
    PretrainStore(tmp_path).get_or_train("k", m, fit_for(m, calls))
    state = tmp_path / "_pretrain" / "k" / "state.pt"
    blob = bytearray(state.read_bytes())
    if damage == "flip":
        blob[len(blob) // 2] ^= 0xFF
        state.write_bytes(bytes(blob))
    elif damage == "truncate":
        state.write_bytes(bytes(blob[:20]))
    else:  # stored before sidecars existed: no checksum, and the file does not unpickle
        (state.parent / "state.pt.sha256").unlink()
        state.write_bytes(b"not a pickle at all")
    capsys.readouterr()
    fresh = linear()
    result, reused = PretrainStore(tmp_path).get_or_train("k", fresh, fit_for(fresh, calls, value=2.5))
    err = capsys.readouterr().err
    assert not reused and calls == [1, 1] and result.iterations == 7
    assert torch.equal(fresh.weight, torch.full((1, 2), 2.5, dtype=torch.float64))
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "stage-1 model k is corrupt" in lines[0] and "rebuilding it" in lines[0], err
    assert "Traceback" not in err
    # the rebuilt state is whole again: loaded, not retrained
    third = linear()
    assert PretrainStore(tmp_path).get_or_train("k", third, fit_for(third, calls))[1] and calls == [1, 1]
    assert torch.equal(third.weight, fresh.weight)


@linux_proc
def test_wait_for_a_live_holder_is_bounded_and_shows_progress(tmp_path, capsys, sleeper):
    write_lock(tmp_path / "_pretrain" / "k", **locks.identity(sleeper.pid))
    calls, m = [], linear()
    store = PretrainStore(tmp_path, poll_s=0.05, wait_s=1.0, progress_s=0.3)
    t0 = time.monotonic()
    with pytest.raises(PretrainBusy) as exc:
        store.get_or_train("k", m, fit_for(m, calls))
    assert time.monotonic() - t0 < 5 and calls == []
    assert "\n" not in str(exc.value) and "still locked" in str(exc.value) and LOCK_NAME in str(exc.value)
    lines = capsys.readouterr().err.strip().splitlines()
    assert 2 <= len(lines) <= 4, lines  # about one every 0.3 s within the 1 s limit
    assert all(f"pid {sleeper.pid}" in ln and "waiting for stage-1 model k" in ln for ln in lines)


@linux_proc
def test_a_reused_pid_does_not_hold_the_pretrain_lock(tmp_path, sleeper):
    # the lock names a live pid, but with another start time: the process that wrote it is gone
    write_lock(tmp_path / "_pretrain" / "k", **{**locks.identity(sleeper.pid), "start": 1})
    calls, m = [], linear()
    store = PretrainStore(tmp_path, poll_s=0.05, wait_s=1.0, progress_s=10)
    result, reused = store.get_or_train("k", m, fit_for(m, calls))
    assert calls == [1] and not reused and not (tmp_path / "_pretrain" / "k" / LOCK_NAME).exists()


def test_wait_limit_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("DLM_BENCH_PRETRAIN_WAIT_S", "120")
    monkeypatch.setenv("DLM_BENCH_PRETRAIN_PROGRESS_S", "15")
    store = PretrainStore(tmp_path)
    assert (store.wait_s, store.progress_s) == (120.0, 15.0)
    monkeypatch.delenv("DLM_BENCH_PRETRAIN_WAIT_S")
    assert PretrainStore(tmp_path).wait_s == 6 * 3600  # much less than the old 7 days
    monkeypatch.setenv("DLM_BENCH_PRETRAIN_WAIT_S", "-3")
    with pytest.raises(ValueError, match="DLM_BENCH_PRETRAIN_WAIT_S"):
        PretrainStore(tmp_path)
