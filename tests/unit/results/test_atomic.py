"""results/atomic.py, the one atomic write (results, checkpoints, stage-1 store, data cache): the bytes land, the
mode is what the umask allows (not mkstemp's 0600), the file is fsynced before the rename, and a failed write leaves
the old file and no temporary file behind."""

import os

import pytest

from dlm_bench.results import atomic


def test_writes_replaces_and_honours_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        path = atomic.atomic_write_text(tmp_path / "sub" / "run.json", "one\r\n")
        atomic.atomic_write_text(path, "two\n")
    finally:
        os.umask(old)
    assert path.read_bytes() == b"two\n"
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in path.parent.iterdir()) == ["run.json"]


def test_fsyncs_the_temporary_file_before_the_rename(tmp_path, monkeypatch):
    events = []
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: events.append("fsync"))
    real_replace = atomic.os.replace
    monkeypatch.setattr(atomic.os, "replace", lambda a, b: (events.append(os.path.basename(a)), real_replace(a, b)))
    atomic.atomic_write(tmp_path / "x.pt", lambda fh: fh.write(b"\0\1"))
    assert events[0] == "fsync" and events[1].startswith(".x.pt.") and events[1].endswith(".tmp")


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = atomic.atomic_write_text(tmp_path / "curve.csv", "old\n")

    def boom(fh):
        fh.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic.atomic_write(path, boom)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["curve.csv"]


def test_a_caller_may_name_the_temporary_prefix(tmp_path, monkeypatch):
    seen = []
    real_replace = atomic.os.replace
    monkeypatch.setattr(atomic.os, "replace", lambda a, b: (seen.append(os.path.basename(a)), real_replace(a, b)))
    atomic.atomic_write(tmp_path / "checkpoint-stage1.pt", lambda fh: fh.write(b"x"), prefix=".checkpoint.")
    assert seen[0].startswith(".checkpoint.") and seen[0].endswith(".tmp")
