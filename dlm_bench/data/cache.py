"""What is in the cache is what was fetched: staging, sidecars, checks.

A download (or mirror copy) lands in a private staging folder `<cache>/.staging/<pid>-<random>/`, is unpacked
and parsed there, its shape checked, and only then moved into the cache (os.replace, same file system). At that
moment a sidecar `<file>.sha256.json` records its sha256, size, mtime and ctime (and those of what was unpacked).
A load that needs nothing fetched creates nothing in the cache (a read-only cache that holds every file loads).

Hash-check policy on every load: size, mtime and ctime against the sidecar (no hashing). A file edited in place
keeps neither its ctime (the kernel sets it on every write; no user call can restore it), so an edit with size and
mtime restored is still caught: a ctime change alone triggers a re-hash against the recorded sha256; equal bytes
(a cache copied with cp -a / rsync, which changes ctime) re-record the stamps once, different bytes are an error.
Re-hashing every file on every load was rejected: song / airline / epsilon files are hundreds of MB.
`dlm-bench fetch --verify` always re-hashes.
The staging folder is removed on success, on error and on SIGTERM; one left by a killed process (SIGKILL)
is removed by the next fetch once its pid is gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import signal
import threading
from pathlib import Path

from ..errors import Terminated
from ..results.atomic import atomic_write_text
from ..results.file_modes import honour_umask
from .datasets import DatasetError

SIDECAR_SUFFIX = ".sha256.json"
STAGING = ".staging"


def sha256_of(path: Path, algorithm: str = "sha256") -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def hash_of(path: Path, known_hash: str) -> str:
    """`path` hashed with the algorithm of `known_hash` ("sha256:..." / "sha512:..."), in the same form."""
    alg = known_hash.split(":", 1)[0]
    return f"{alg}:{sha256_of(path, alg)}"


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def write_sidecar(path: Path, members: list[Path] = (), sha256: str | None = None) -> dict:
    """Record `path` (and the files unpacked from it, with their sha256) as they are now."""
    st = path.stat()
    record = {
        "sha256": sha256 or sha256_of(path),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "members": {str(m.relative_to(path.parent)): _stamp(m) + [sha256_of(m)] for m in members},
    }
    side = sidecar_path(path)
    atomic_write_text(side, json.dumps(record, indent=1) + "\n")
    return record


def try_write_sidecar(path: Path, members: list[Path] = (), sha256: str | None = None) -> None:
    """write_sidecar where the cache may be read-only (a shared, pre-filled cache): a record that cannot be
    written is skipped; the file is still used."""
    try:
        write_sidecar(path, members, sha256)
    except OSError:
        pass


def read_sidecar(path: Path) -> dict | None:
    try:
        rec = json.loads(sidecar_path(path).read_text())
        return rec if isinstance(rec, dict) and "sha256" in rec else None
    except (OSError, ValueError):
        return None


def refetch_hint(name: str | None) -> str:
    return f"re-fetch it with: dlm-bench fetch {name} --force" if name else "delete it and fetch again"


def quick_check(path: Path, name: str | None) -> bool:
    """True if `path` matches its sidecar (see the hash-check policy above); False if it has no sidecar.
    A mismatch raises a one-line DatasetError naming the file and the command that re-fetches it."""
    rec = read_sidecar(path)
    if rec is None:
        return False
    recorded = {path.name: [rec.get("size"), rec.get("mtime_ns"), rec.get("ctime_ns"), rec.get("sha256")]}
    recorded.update((rel, list(st) + [None] * (4 - len(st))) for rel, st in (rec.get("members") or {}).items())
    restamp = False
    for rel, (size, mtime, ctime, sha) in recorded.items():
        f = path.parent / rel
        if not f.is_file():
            raise DatasetError(f"{f} is missing from the cache; {refetch_hint(name)}")
        now = _stamp(f)
        if now[:2] != [size, mtime]:
            what = "size" if now[0] != size else "modification time"
            raise DatasetError(f"{f} changed since it was fetched ({what} differs from {sidecar_path(path).name}); "
                               f"{refetch_hint(name)}")
        if ctime is not None and now[2] != ctime:  # written to since (or copied): the bytes decide
            if sha is None or sha256_of(f) != sha:
                raise DatasetError(f"{f} changed since it was fetched (its bytes differ from "
                                   f"{sidecar_path(path).name}, though size and modification time match); "
                                   f"{refetch_hint(name)}")
            restamp = True
    if restamp:
        members = [path.parent / rel for rel in (rec.get("members") or {})]
        try_write_sidecar(path, members, sha256=rec["sha256"])
    return True


def verify(path: Path, expected: str | None, name: str | None) -> tuple[bool, str]:
    """Re-hash `path` against the registry's hash ("sha256:..." / "sha512:...", else the sidecar's sha256).
    (ok, one-line message)."""
    if not path.is_file():
        return False, f"{path} is not in the cache; {refetch_hint(name)}"
    rec = read_sidecar(path)
    if expected:
        want, source = expected, "registry"
    else:
        want, source = (f"sha256:{rec['sha256']}" if rec else None), "sidecar"
    if want is None:
        return False, f"{path}: no registry hash and no sidecar (fetched before sidecars existed); {refetch_hint(name)}"
    actual = hash_of(path, want)
    if actual != want:
        return False, f"{path}: {actual} does not match the {source} ({want}); {refetch_hint(name)}"
    try:
        quick_check(path, name)  # members unpacked from it, and a stale sidecar
    except DatasetError as err:
        return False, str(err)
    if rec is None:  # a verified file placed by hand: record it
        try_write_sidecar(path)
    return True, f"{path.name} {want.split(':')[0]} ok ({source})"


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def remove_stale_staging(root: Path) -> None:
    if not root.is_dir():
        return
    for d in root.iterdir():
        pid = d.name.split("-", 1)[0]
        if pid.isdigit() and _pid_gone(int(pid)):
            shutil.rmtree(d, ignore_errors=True)


def _terminate(signum, frame):

    raise Terminated(f"signal {signum}")


@contextlib.contextmanager
def staging_area(cache: Path):
    """A private folder inside the cache for one fetch; always removed afterwards. While it exists,
    SIGTERM (default action: die on the spot) becomes an exception, so the `finally` below runs."""
    root = cache / STAGING
    remove_stale_staging(root)
    area = root / f"{os.getpid()}-{secrets.token_hex(4)}"
    area.mkdir(parents=True)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    if main and previous in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _terminate)
    try:
        yield area
    finally:
        if main and previous in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        shutil.rmtree(area, ignore_errors=True)
        with contextlib.suppress(OSError):
            root.rmdir()  # only when empty


def install(staged: Path, dest: Path, trash: Path) -> None:
    """Move a staged file or folder to `dest` (replacing what is there) and make it readable per the umask."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_dir() and staged.is_dir():
        os.replace(dest, trash / f"old-{secrets.token_hex(4)}")
    files = [staged] if staged.is_file() else [p for p in staged.rglob("*") if p.is_file()]
    for f in files:
        honour_umask(f)
    os.replace(staged, dest)
