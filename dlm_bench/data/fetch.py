"""Downloads with pooch: cache dir, sha256, retries, progress bar, unpacking, mirror, offline errors.

Environment:
  DLM_BENCH_DATA    cache directory (default: the per-user cache, pooch.os_cache("dlm_bench"))
  DLM_BENCH_MIRROR  URL or local directory replacing every download origin; a file is looked up
                    as <mirror>/<mirror_path> (the layout of the project's offline data copies)

A file only ever appears under its final cache name after a complete download whose sha256 matched
(or, for files the registry has no sha256 for, after it parsed to the expected shape): see cache.py for the
staging folder, the sidecars and the checks on every load.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Union

import pooch
import requests

from . import cache
from .datasets import DATASETS, DatasetError, DatasetSpec, RemoteFile, get_spec

RETRIES = 3  # attempts for transient failures (connection refused/reset, timeouts, 5xx)
BACKOFF_S = 0.5
TIMEOUT_S = 60
pooch.get_logger().setLevel("WARNING")  # its INFO lines (multi-line for unknown hashes) would clutter the CLI


FORMAT_VERSION = 1  # bump when a parser's output changes, so stale conversions are not reused


def processed_path(spec: DatasetSpec) -> Path:
    """Where a large dataset's parsed arrays are kept (read instead of the raw files)."""
    return cache_dir() / "processed" / f"{spec.name}.v{FORMAT_VERSION}.npz"


def cache_dir() -> Path:
    env = os.environ.get("DLM_BENCH_DATA")
    return Path(env).expanduser() if env else Path(pooch.os_cache("dlm_bench"))


def mirror() -> Optional[str]:
    return os.environ.get("DLM_BENCH_MIRROR") or None


def _is_url(s: str) -> bool:
    return bool(re.match(r"^(https?|ftp)://", s))


def source_of(rf: RemoteFile) -> str:
    """Where `rf` is fetched from: the mirror if one is set, else its canonical URL."""
    m = mirror()
    if not m:
        return rf.url
    if _is_url(m):
        return m.rstrip("/") + "/" + rf.mirror_path
    return str(Path(m).expanduser() / rf.mirror_path)


def cached_path(rf: RemoteFile) -> Path:
    return cache_dir() / rf.mirror_path


def unpacked_paths(rf: RemoteFile) -> list[Path]:
    """The paths a parser receives for `rf` (the download itself, or what was unpacked from it)."""
    path = cached_path(rf)
    if rf.unpack in ("zip", "tar"):
        out = path.parent / (path.name + (".unzip" if rf.unpack == "zip" else ".untar"))
        return [out / m for m in (rf.members or ())]
    if rf.unpack in ("bz2", "gz"):
        return [path.parent / (path.name + ".decomp")]
    return [path]


def is_cached(rf: RemoteFile) -> bool:
    return cached_path(rf).is_file() and all(p.is_file() for p in unpacked_paths(rf))


def status(spec: DatasetSpec) -> str:
    if spec.shipped:
        return "shipped"
    paths = [processed_path(spec)] if spec.large and processed_path(spec).is_file() else None
    if paths is None:
        if not (spec.files and all(is_cached(f) for f in spec.files)):
            return "not cached"
        paths = [cached_path(f) for f in spec.files]
    try:
        for path in paths:
            cache.quick_check(path, spec.name)
    except DatasetError:
        return "changed (fetch --force)"
    return "cached"


def _processor(rf: RemoteFile):
    if rf.unpack == "zip":
        return pooch.Unzip(members=list(rf.members) if rf.members else None)
    if rf.unpack == "tar":
        return pooch.Untar(members=list(rf.members) if rf.members else None)
    if rf.unpack in ("bz2", "gz"):
        return pooch.Decompress(method=rf.unpack)
    return None


def _progress(progress: Optional[bool]) -> bool:
    if progress is None:
        return sys.stderr.isatty()
    return progress


def _checksum_error(rf: RemoteFile, actual: str, origin: str) -> DatasetError:
    return DatasetError(
        f"checksum mismatch for {rf.mirror_path} from {origin}: expected sha256 {rf.sha256}, "
        f"got {actual}; the bad file was removed, fetch again or check DLM_BENCH_MIRROR"
    )


def _offline_error(rf: RemoteFile, origin: str, why: str) -> DatasetError:
    return DatasetError(
        f"cannot download {rf.mirror_path} from {origin} ({why}); not in the cache {cache_dir()}: "
        f"connect to the network, or set DLM_BENCH_MIRROR=<URL or directory> to a copy laid out as "
        f"<mirror>/{rf.mirror_path}, or put the file at {cached_path(rf)}"
    )


def _copy_from_directory(rf: RemoteFile, src: Path, dest: Path) -> None:
    if not src.is_file():
        raise _offline_error(rf, str(src), "no such file in the mirror directory")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix="." + dest.name + ".", suffix=".part")
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        if rf.sha256:
            actual = cache.sha256_of(Path(tmp))
            if actual != rf.sha256:
                raise _checksum_error(rf, actual, str(src))
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, requests.HTTPError):
        code = exc.response.status_code if exc.response is not None else 0
        return code >= 500
    return isinstance(exc, (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError))


def _download(rf: RemoteFile, url: str, dest: Path, progress: bool) -> None:
    known = f"sha256:{rf.sha256}" if rf.sha256 else None
    downloader = pooch.HTTPDownloader(progressbar=progress, timeout=TIMEOUT_S)
    for attempt in range(RETRIES):
        try:
            pooch.retrieve(url, known_hash=known, fname=dest.name, path=dest.parent, downloader=downloader)
            return
        except ValueError as exc:  # pooch: hash mismatch (its temporary file is already deleted)
            hashes = [h for h in re.findall(r"[0-9a-f]{64}", str(exc)) if h != rf.sha256]
            if dest.exists():  # never keep an unverified file under the cache name
                dest.unlink()
            raise _checksum_error(rf, hashes[0] if hashes else "unknown", url) from None
        except requests.HTTPError as exc:
            code = exc.response.status_code if exc.response is not None else "?"
            if not _transient(exc) or attempt == RETRIES - 1:
                raise _offline_error(rf, url, f"HTTP {code}") from None
        except (requests.RequestException, OSError) as exc:
            if not _transient(exc) or attempt == RETRIES - 1:
                why = type(exc).__name__
                if isinstance(exc, requests.exceptions.ChunkedEncodingError):
                    why = "transfer interrupted"
                elif isinstance(exc, requests.ConnectionError):
                    why = "no connection"
                raise _offline_error(rf, url, why) from None
        time.sleep(BACKOFF_S * 2**attempt)


def usable(rf: RemoteFile, name: str | None = None) -> bool:
    """True if `rf` is in the cache and unchanged. A file with no sidecar (cached before sidecars, or put there
    by hand) is hashed once against the registry and recorded; with no registry sha256 it counts as usable
    and is recorded after it parses (load_spec). A changed file raises (naming `dlm-bench fetch NAME --force`)."""
    dest = cached_path(rf)
    if not is_cached(rf):
        return False
    if cache.quick_check(dest, name):
        return True
    if rf.sha256:
        actual = cache.sha256_of(dest)
        if actual != rf.sha256:
            raise DatasetError(f"{dest} does not match the registry (sha256 {actual}, expected {rf.sha256}); "
                               f"{cache.refetch_hint(name)}")
        cache.write_sidecar(dest, unpacked_paths(rf) if rf.unpack else [], sha256=actual)
    return True


def stage_file(rf: RemoteFile, area: Path, progress: Optional[bool] = None) -> list[Path]:
    """Download / copy `rf` into the staging folder `area` (same layout as the cache) and unpack it there;
    returns the staged paths a parser receives."""
    staged = area / rf.mirror_path
    staged.parent.mkdir(parents=True, exist_ok=True)
    origin = source_of(rf)
    if _is_url(origin):
        _download(rf, origin, staged, _progress(progress))
    else:
        _copy_from_directory(rf, Path(origin), staged)
    proc = _processor(rf)
    if proc is not None:
        try:
            proc(str(staged), "download", None)
        except Exception as exc:  # a truncated/corrupt archive whose hash was unknown
            raise DatasetError(f"cannot unpack {rf.mirror_path} ({type(exc).__name__}: {exc}); nothing was cached") from None
    paths = [area / p.relative_to(cache_dir()) for p in unpacked_paths(rf)]
    missing = [str(p.relative_to(area)) for p in paths if not p.is_file()]
    if missing:
        raise DatasetError(f"{rf.mirror_path}: expected {', '.join(missing)} after unpacking (different archive?)")
    return paths


def commit_file(rf: RemoteFile, area: Path) -> list[Path]:
    """Move a staged `rf` (and what was unpacked from it) into the cache and write its sidecar."""
    dest = cached_path(rf)
    staged = area / rf.mirror_path
    trash = area / ".trash"
    trash.mkdir(exist_ok=True)
    unpacked = unpacked_paths(rf)
    if rf.unpack:  # the folder pooch unpacked into: <file>.unzip / .untar / the .decomp file
        out = unpacked[0] if rf.unpack in ("bz2", "gz") else dest.parent / (dest.name + (".unzip" if rf.unpack == "zip" else ".untar"))
        cache.install(area / out.relative_to(cache_dir()), out, trash)
    cache.install(staged, dest, trash)
    cache.write_sidecar(dest, unpacked if rf.unpack else [])
    return unpacked


def fetch_file(rf: RemoteFile, progress: Optional[bool] = None, name: Optional[str] = None,
               force: bool = False) -> list[Path]:
    """Local paths for `rf` (downloaded, verified and unpacked on first use). No parsing here: a file the
    registry has no sha256 for should come through load_spec, which parses it before it is cached."""
    if not force and usable(rf, name):
        return unpacked_paths(rf)
    with cache.staging_area(cache_dir()) as area:
        stage_file(rf, area, progress)
        return commit_file(rf, area)


def verify(names: Union[list[str], str]) -> list[tuple[str, bool, str]]:
    """`dlm-bench fetch --verify [NAME...]`: re-hash cached files against the registry or their sidecar.
    With "all", only datasets that have something in the cache."""
    if names == "all":
        names = [n for n in sorted(DATASETS) if not DATASETS[n].shipped and status(DATASETS[n]) != "not cached"]
    out = []
    for name in names:
        spec = get_spec(name)
        if spec.shipped:
            out.append((name, True, "shipped with the package (not cached)"))
            continue
        files = [(cached_path(rf), rf.sha256) for rf in spec.files]
        if spec.large:  # the converted .npz is what runs read; the raw files may have been cleaned away
            files = [(p, s) for p, s in files if p.is_file()] + [(processed_path(spec), None)]
        checks = [cache.verify(p, sha, name) for p, sha in files]
        bad = [msg for ok, msg in checks if not ok]
        out.append((name, not bad, bad[0] if bad else f"{len(checks)} file(s) ok"))
    return out
