"""Downloads: cache dir, hashes, mirror, hand-placed files, resumable transfers, streamed heads, honest errors.

Environment:
  DLM_BENCH_DATA    cache directory (default: the per-user cache, pooch.os_cache("dlm_bench"))
  DLM_BENCH_MIRROR  URL or local directory replacing every download origin; a file is looked up
                    as <mirror>/<mirror_path> (the layout of the project's offline data copies)

Where a file comes from, in this order: a path given for it (`dataset.path` of a named dataset), a file put by hand
at its cache path (or, for a file the canonical URL serves inside a zip, that zip at <cache>/<folder>/<zip name>),
the mirror, the canonical URL. A file only ever appears under its final cache name after its hash matched (or, for
unpinned files, after it parsed to the expected shape): see cache.py for the staging folder, the sidecars and the
checks on every load.

Transfers are done here with requests rather than pooch.HTTPDownloader, because pooch (1.9) neither honours a
429's Retry-After nor resumes an interrupted transfer with an HTTP Range request, and cannot stop a stream after
the first N lines; the unpacking is pooch's (Unzip / Untar / Decompress).
"""

from __future__ import annotations

import bz2
import os
import re
import shutil
import sys
import threading
import time
import zipfile
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import urlsplit
from typing import Optional, Union

import pooch
import requests

from . import cache
from .datasets import DATASETS, DatasetError, DatasetSpec, RemoteFile, get_spec

RETRIES = 3  # attempts for transient failures (connection refused/reset, timeouts, 429, 5xx)
BACKOFF_S = 0.5
TIMEOUT_S = 60  # seconds without a byte during a transfer before the attempt counts as timed out
# a server that accepts the connection and never answers: each attempt gives up on the first byte after this long
# (DLM_BENCH_FETCH_TIMEOUT_S overrides), and after WAIT_NOTE_S a line says what fetch is waiting for
FIRST_BYTE_TIMEOUT_S = 20.0
CONNECT_TIMEOUT_S = 10.0
WAIT_NOTE_S = 5.0
MAX_RETRY_AFTER_S = 300  # a longer Retry-After is reported instead of waited for
ANNOUNCE_MB = 100  # the size is printed before any download larger than this
RESUME_MIN_BYTES = 100 * 10**6  # an interrupted transfer at least this large is kept in <cache>/.partial to resume
CHUNK = 1 << 16  # read size: an interrupted transfer keeps every whole chunk it received
PARTIAL = ".partial"
pooch.get_logger().setLevel("WARNING")  # its INFO lines would clutter the CLI


FORMAT_VERSION = 1  # bump when a parser's output changes, so stale conversions are not reused


def processed_path(spec: DatasetSpec) -> Path:
    """Where a large dataset's parsed arrays are kept (read instead of the raw files)."""
    return cache_dir() / "processed" / f"{spec.name}.v{FORMAT_VERSION}.npz"


def cache_dir() -> Path:
    env = os.environ.get("DLM_BENCH_DATA")
    return Path(env).expanduser() if env else Path(pooch.os_cache("dlm_bench"))


def writable_cache() -> Path:
    """The cache directory, created if needed; a one-line DatasetError when it cannot be written (a regular file,
    a read-only folder or file system) instead of a PermissionError traceback."""
    d = cache_dir()
    what = f"the dataset cache {d} (DLM_BENCH_DATA)"
    if d.exists() and not d.is_dir():
        raise DatasetError(f"{what} is a file, not a folder; set DLM_BENCH_DATA to a writable folder")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"cannot create {what}: {exc.strerror or exc}; set DLM_BENCH_DATA to a writable folder") from None
    if not os.access(d, os.W_OK | os.X_OK):
        raise DatasetError(f"{what} is read-only and a file must be fetched into it; set DLM_BENCH_DATA to a "
                           "writable folder, or fill the cache first (dlm-bench fetch NAME)")
    return d


def mirror() -> Optional[str]:
    return os.environ.get("DLM_BENCH_MIRROR") or None


def is_url(s: str) -> bool:
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", s))


def source_of(rf: RemoteFile) -> str:
    """Where `rf` is fetched from when nothing local has it: the mirror if one is set, else its canonical URL."""
    m = mirror()
    if not m:
        return rf.url
    if is_url(m):
        try:
            parts = urlsplit(m)
        except ValueError as exc:
            raise DatasetError(f"DLM_BENCH_MIRROR={m!r} is not a usable URL ({exc}); give http(s)://HOST/PATH "
                               "or a local directory") from None
        if parts.scheme in ("http", "https", "ftp") and not parts.netloc:
            raise DatasetError(f"DLM_BENCH_MIRROR={m!r} is not a usable URL (no host); give http(s)://HOST/PATH "
                               "or a local directory")
        return m.rstrip("/") + "/" + rf.mirror_path
    return str(Path(m).expanduser() / rf.mirror_path)


def cached_path(rf: RemoteFile) -> Path:
    return cache_dir() / rf.mirror_path


def head_path(rf: RemoteFile) -> Path:
    """Where the first rf.head_lines (decompressed) lines of a streamed file are kept."""
    path = cached_path(rf)
    stem = path.name[:-4] if path.name.endswith(".bz2") else path.name
    return path.with_name(f"{stem}.head{rf.head_lines}")


def wrapper_zip_path(rf: RemoteFile) -> Optional[Path]:
    """For a file the canonical URL serves inside a zip: where a hand-downloaded copy of that zip is looked for."""
    if not rf.member:
        return None
    name = requests.utils.unquote(rf.url.rstrip("/").rsplit("/", 1)[-1]) or "download.zip"
    return cached_path(rf).parent / name


def unpacked_paths(rf: RemoteFile) -> list[Path]:
    """The paths a parser receives for `rf` (the download itself, what was unpacked from it, or its head)."""
    if rf.head_lines:
        return [head_path(rf)]
    path = cached_path(rf)
    if rf.unpack in ("zip", "tar"):
        out = path.parent / (path.name + (".unzip" if rf.unpack == "zip" else ".untar"))
        return [out / m for m in (rf.members or ())]
    if rf.unpack in ("bz2", "gz"):
        return [path.parent / (path.name + ".decomp")]
    return [path]


def record_path(rf: RemoteFile) -> Path:
    """The file whose sidecar records `rf` in the cache."""
    return head_path(rf) if rf.head_lines else cached_path(rf)


def is_cached(rf: RemoteFile) -> bool:
    return record_path(rf).is_file() and all(p.is_file() for p in unpacked_paths(rf))


def hand_placed(rf: RemoteFile) -> Optional[Path]:
    """A file put in the cache by hand that still needs checking / unpacking: the download at its cache path (its
    members not unpacked yet, or a full file of which only the head is needed), or the zip wrapping it."""
    path = cached_path(rf)
    if path.is_file() and (rf.head_lines or not is_cached(rf)):
        return path
    z = wrapper_zip_path(rf)
    if z is not None and z.is_file():
        return z
    return None


def choose(rf: RemoteFile) -> RemoteFile:
    """The file that stands for `rf` on this machine: `rf` itself (the canonical download), or one of its registered
    copies (catalog.yaml `copy_of`: the same members in another party's archive, under its own path and hash) when
    no form of `rf` is here and that copy is cached, placed by hand or in a directory mirror, checked in that order.
    A URL mirror is asked for `rf` only."""
    if not rf.copies:
        return rf
    both = (rf,) + rf.copies
    for here in (is_cached, lambda f: hand_placed(f) is not None, lambda f: _mirror_has(f) is True):
        for f in both:
            if here(f):
                return f
    return rf


def files_of(spec: DatasetSpec) -> tuple[RemoteFile, ...]:
    """`spec.files`, each replaced by the copy that stands for it here (choose)."""
    return tuple(choose(rf) for rf in spec.files)


def status(spec: DatasetSpec) -> str:
    if spec.shipped:
        return "shipped"
    paths = [processed_path(spec)] if spec.large and processed_path(spec).is_file() else None
    if paths is None:
        files = files_of(spec)
        if not (files and all(is_cached(f) for f in files)):
            return "not cached"
        paths = [record_path(f) for f in files]
    try:
        for path in paths:
            cache.quick_check(path, spec.name)
    except DatasetError:
        return "changed (fetch --force)"
    return "cached"


def _mirror_has(rf: RemoteFile) -> Optional[bool]:
    """True / False for a directory mirror; None for a URL mirror (not probed) or none."""
    m = mirror()
    if not m or is_url(m):
        return None
    return (Path(m).expanduser() / rf.mirror_path).is_file()


def _mb(x: float) -> str:
    return f"{x:,.0f} MB" if x >= 10 else f"{x:.1f} MB" if x >= 0.1 else f"{x * 1000:.0f} kB"


def _missing_source(rf: RemoteFile) -> Optional[str]:
    """Why `rf` cannot be had now (None: it can): not cached, not placed by hand, and the directory mirror lacks it
    (a fetch would look only there), or there is no mirror and no URL."""
    if is_cached(rf) or hand_placed(rf) is not None:
        return None
    if mirror():
        return None if _mirror_has(rf) is not False else f"not in DLM_BENCH_MIRROR={mirror()}"
    return None if rf.url else "no URL known"


def require(names: list[str]) -> None:
    """Raise ONE DatasetError naming every dataset in `names` that cannot be had now (see availability: "no known
    source"), each with how to provide its missing files; return None when every one is shipped, cached, placed
    by hand, in the mirror or downloadable. `csv` (the user's own table) is skipped; unknown names raise."""
    bad = []
    for name in dict.fromkeys(names):
        if name == "csv":
            continue
        spec = get_spec(name)
        if spec.shipped or status(spec) != "not cached":
            continue
        how = [f"{rf.mirror_path} ({w}; {_put_hint(rf)}, or set DLM_BENCH_MIRROR to a copy laid out as "
               f"<mirror>/{rf.mirror_path})" for rf in files_of(spec) if (w := _missing_source(rf))]
        if how:
            bad.append(f"{name}: " + "; ".join(how))
    if bad:
        raise DatasetError(f"{len(bad)} dataset(s) cannot be had here: " + " | ".join(bad))


def _checksum_error(rf: RemoteFile, actual: str, origin: str) -> DatasetError:
    """What became of the bad bytes: a download's copy is removed; a file the user put in the cache by hand, gave as
    dataset.path or keeps in a mirror folder is the user's and stays where it is (the message says where)."""
    if is_url(origin):
        what = "the downloaded copy was removed; fetch again or check DLM_BENCH_MIRROR"
    elif mirror() and not is_url(mirror()) and Path(origin).is_relative_to(Path(mirror()).expanduser()):
        what = f"nothing was cached; the mirror's file {origin} was kept: check DLM_BENCH_MIRROR"
    else:
        what = (f"nothing was cached; the file placed by hand was kept at {origin}: replace it with the right file "
                f"or delete it and fetch again")
    return DatasetError(f"checksum mismatch for {rf.mirror_path} from {origin}: expected {rf.known_hash}, got {actual}; "
                        + what)


def _put_hint(rf: RemoteFile) -> str:
    z = wrapper_zip_path(rf)
    alt = f" (or the zip from {rf.url} at {z})" if z is not None else ""
    return f"put the file at {cached_path(rf)}{alt}"


def _offline_error(rf: RemoteFile, origin: str, why: str) -> DatasetError:
    return DatasetError(
        f"cannot download {rf.mirror_path} from {origin} ({why}); not in the cache {cache_dir()}: "
        f"connect to the network, or set DLM_BENCH_MIRROR=<URL or directory> to a copy laid out as "
        f"<mirror>/{rf.mirror_path}, or {_put_hint(rf)}"
    )


def _disk_error(path: Path, exc: OSError) -> DatasetError:
    return DatasetError(f"cannot write {path}: {exc.strerror or exc} (errno {exc.errno}); free space or set "
                        "DLM_BENCH_DATA to another folder")


def _check_hash(rf: RemoteFile, path: Path, origin: str) -> None:
    if rf.known_hash:
        actual = cache.hash_of(path, rf.known_hash)
        if actual != rf.known_hash:
            path.unlink(missing_ok=True)
            raise _checksum_error(rf, actual, origin)


def _retry_after(resp: requests.Response, attempt: int) -> float:
    """Seconds to wait before retrying a 429 / 503: its Retry-After (seconds or an HTTP date), else backoff."""
    value = resp.headers.get("Retry-After")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
            except (TypeError, ValueError):
                pass
    return BACKOFF_S * 2**attempt


def _announce(rf: RemoteFile, url: str, total: Optional[int]) -> None:
    mb = total / 1e6 if total else rf.size_mb
    if mb is not None and mb > ANNOUNCE_MB:
        print(f"downloading {rf.mirror_path}: {_mb(mb)} from {url}", file=sys.stderr, flush=True)


def first_byte_timeout() -> float:
    """FIRST_BYTE_TIMEOUT_S, or DLM_BENCH_FETCH_TIMEOUT_S (seconds > 0) where set."""
    value = os.environ.get("DLM_BENCH_FETCH_TIMEOUT_S")
    if not value:
        return FIRST_BYTE_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise DatasetError(f"DLM_BENCH_FETCH_TIMEOUT_S={value!r} must be a finite number of seconds > 0")
    return seconds


def _get(url: str, headers: dict, attempt: int) -> requests.Response:
    """requests.get of the headers (streamed), with a line on stderr when the server keeps silent WAIT_NOTE_S:
    a mirror that accepts the connection and never answers is otherwise minutes of silence."""
    limit = first_byte_timeout()
    note = threading.Timer(WAIT_NOTE_S, lambda: print(
        f"fetch: waiting for {urlsplit(url).netloc or url} to answer ({url}); no byte after {WAIT_NOTE_S:g} s, "
        f"giving up after {limit:g} s (attempt {attempt + 1} of {RETRIES})", file=sys.stderr, flush=True))
    note.daemon = True
    note.start()
    try:
        resp = requests.get(url, stream=True, timeout=(min(CONNECT_TIMEOUT_S, limit), limit), headers=headers)
    finally:
        note.cancel()
    sock = getattr(getattr(resp.raw, "connection", None), "sock", None)
    if sock is not None:  # it answered: the transfer itself may pause longer (best effort; urllib3 2 names it so)
        sock.settimeout(max(TIMEOUT_S, limit))
    return resp


def _open(url: str, rf: RemoteFile, headers: dict, attempt: int) -> Optional[requests.Response]:
    """GET `url` (streamed); None after a retryable answer (429 / 5xx, Retry-After honoured, slept here)."""
    try:
        resp = _get(url, headers, attempt)
    except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
            requests.exceptions.InvalidSchema) as exc:
        where = " (check DLM_BENCH_MIRROR)" if mirror() and is_url(mirror()) else ""
        raise DatasetError(f"bad download URL {url!r} for {rf.mirror_path}{where}: {exc}") from None
    if resp.status_code == 429 or resp.status_code >= 500:
        code = resp.status_code
        wait = _retry_after(resp, attempt) if code in (429, 503) else BACKOFF_S * 2**attempt
        resp.close()
        if attempt == RETRIES - 1 or wait > MAX_RETRY_AFTER_S:
            extra = f", Retry-After {wait:.0f} s" if code in (429, 503) else ""
            raise _offline_error(rf, url, f"HTTP {code}{extra}, {attempt + 1} attempt(s)")
        time.sleep(wait)
        return None
    if resp.status_code >= 400 and resp.status_code != 416:
        resp.close()
        raise _offline_error(rf, url, f"HTTP {resp.status_code}")
    return resp


def _download(rf: RemoteFile, url: str, dest: Path) -> None:
    """`url` -> `dest`, retried on transient failures, resumed with a Range request where a partial exists and the
    server answers 206 (a 200 restarts from zero). A large interrupted transfer stays in <cache>/.partial."""
    part = cache_dir() / PARTIAL / (rf.mirror_path + (".zip" if rf.member and url == rf.url else ""))
    try:
        part.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _disk_error(part.parent, exc) from None
    announced, total = False, None
    try:
        for attempt in range(RETRIES):
            have = part.stat().st_size if part.exists() else 0
            try:
                resp = _open(url, rf, {"Range": f"bytes={have}-"} if have else {}, attempt)
                if resp is None:
                    continue
                with resp:
                    if resp.status_code == 416:  # nothing left to send: the partial is complete
                        break
                    resumed = have and resp.status_code == 206
                    length = int(resp.headers.get("Content-Length", 0)) or None
                    total = (have + length if resumed else length) if length else None
                    if not announced:
                        _announce(rf, url, total)
                        announced = True
                    with open(part, "ab" if resumed else "wb") as f:
                        for block in resp.iter_content(CHUNK):
                            f.write(block)
                    if total is not None and part.stat().st_size < total:
                        raise requests.exceptions.ChunkedEncodingError("short read")
                break
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                    requests.exceptions.ChunkedEncodingError) as exc:
                if attempt == RETRIES - 1:
                    why = ("transfer interrupted" if isinstance(exc, requests.exceptions.ChunkedEncodingError)
                           or (part.exists() and part.stat().st_size) else
                           "timed out" if isinstance(exc, requests.exceptions.Timeout) else "no connection")
                    raise _offline_error(rf, url, f"{why}, {RETRIES} attempts") from None
                time.sleep(BACKOFF_S * 2**attempt)
            except requests.RequestException as exc:  # any other failure of the transfer itself
                raise _offline_error(rf, url, type(exc).__name__) from None
            except OSError as exc:  # writing the partial file: a full disk, a read-only folder
                raise _disk_error(part, exc) from None
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(part), dest)
    except BaseException:
        if part.exists() and (total or 0) < RESUME_MIN_BYTES:
            part.unlink()
        raise
    finally:
        _prune_empty(part.parent, cache_dir() / PARTIAL)


def _prune_empty(d: Path, top: Path) -> None:
    """Remove empty folders from `d` up to and including `top` (no empty .partial tree left behind)."""
    while True:
        try:
            d.rmdir()
        except OSError:
            return
        if d == top:
            return
        d = d.parent


def _extract_member(rf: RemoteFile, zpath: Path, dest: Path) -> None:
    try:
        with zipfile.ZipFile(zpath) as z:
            names = z.namelist()
            match = [n for n in names if n == rf.member or n.endswith("/" + rf.member)]
            if not match:
                raise DatasetError(f"{zpath.name} holds no {rf.member} (members: {', '.join(names[:8])}); "
                                   "different archive?")
            with z.open(match[0]) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, CHUNK)
    except zipfile.BadZipFile as exc:
        raise DatasetError(f"cannot unpack {zpath.name} ({exc}); nothing was cached") from None


def _stream_head(rf: RemoteFile, origin: str, out: Path) -> None:
    """The first rf.head_lines lines of a bz2 file (local or over HTTP), decompressed as they arrive; the
    transfer is stopped there, so a multi-GB file costs only the bytes before that line."""
    out.parent.mkdir(parents=True, exist_ok=True)
    dec, got, n = bz2.BZ2Decompressor(), [], 0  # n: line ends decompressed so far

    def feed(chunk: bytes) -> bool:
        nonlocal dec, n
        while chunk:
            data = dec.decompress(chunk)
            got.append(data)
            n += data.count(b"\n")
            if n >= rf.head_lines:
                return True
            chunk, dec = (dec.unused_data, bz2.BZ2Decompressor()) if dec.eof else (b"", dec)  # multi-stream (pbzip2)
        return False

    try:
        if is_url(origin):
            for attempt in range(RETRIES):
                try:
                    resp = _open(origin, rf, {}, attempt)
                    if resp is None:
                        continue
                    with resp:
                        for block in resp.iter_content(CHUNK):
                            if feed(block):
                                break
                    break
                except (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                        requests.exceptions.ChunkedEncodingError):
                    if n or attempt == RETRIES - 1:
                        raise _offline_error(rf, origin, f"transfer interrupted after {n} lines") from None
                    time.sleep(BACKOFF_S * 2**attempt)
        else:
            with open(origin, "rb") as f:
                for block in iter(lambda: f.read(CHUNK), b""):
                    if feed(block):
                        break
    except (OSError, EOFError) as exc:
        if isinstance(exc, requests.RequestException):
            raise
        raise DatasetError(f"cannot read the head of {rf.mirror_path} from {origin}: {exc}") from None
    head = b"".join(got)
    if n >= rf.head_lines:  # else a file shorter than head_lines: all of it, its last line unterminated or not
        head = b"\n".join(head.split(b"\n", rf.head_lines)[:rf.head_lines]) + b"\n"
    try:
        out.write_bytes(head)
    except OSError as exc:
        raise _disk_error(out, exc) from None


def stage_file(rf: RemoteFile, area: Path, source: Optional[Path] = None) -> list[Path]:
    """Bring `rf` into the staging folder `area` (same layout as the cache), check its hash, unpack it there;
    returns the staged paths a parser receives. `source`: a local file named for it (dataset.path)."""
    staged = area / rf.mirror_path
    staged.parent.mkdir(parents=True, exist_ok=True)
    local = source if source is not None else hand_placed(rf)
    origin = str(local) if local is not None else source_of(rf)
    if not is_url(origin) and not Path(origin).is_file():
        raise _offline_error(rf, origin, "no such file in the mirror directory")
    if rf.head_lines:
        out = area / head_path(rf).relative_to(cache_dir())
        _stream_head(rf, origin, out)
        return [out]
    try:
        if is_url(origin):
            if rf.member and origin == rf.url:  # the canonical URL serves a zip around the file
                zpath = staged.with_name(staged.name + ".download.zip")
                _download(rf, origin, zpath)
                _extract_member(rf, zpath, staged)
                zpath.unlink()
            else:
                _download(rf, origin, staged)
        else:
            src = Path(origin)
            if rf.member and src.name != rf.fname and zipfile.is_zipfile(src):
                _extract_member(rf, src, staged)
            else:
                shutil.copyfile(src, staged)
    except DatasetError:
        staged.unlink(missing_ok=True)
        raise
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise _disk_error(staged, exc) from None
    _check_hash(rf, staged, origin)
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


def _processor(rf: RemoteFile):
    if rf.unpack in ("zip", "tar"):
        return (pooch.Unzip if rf.unpack == "zip" else pooch.Untar)(members=list(rf.members) if rf.members else None)
    if rf.unpack in ("bz2", "gz"):
        return pooch.Decompress(method=rf.unpack)
    return None


def usable(rf: RemoteFile, name: str | None = None) -> bool:
    """True if `rf` is in the cache and unchanged. A file with no sidecar (cached before sidecars, or put there
    by hand with its members unpacked) is hashed once against the registry and recorded; with no registry hash it
    counts as usable and is recorded after it parses (load_spec). A changed file raises (naming `dlm-bench fetch
    NAME --force`). Writes nothing when the cache is read-only."""
    if not is_cached(rf):
        return False
    rec = record_path(rf)
    try:
        return _checked(rf, rec, name)
    except OSError as exc:  # a cached file the user may not read (mode 000): one line naming it, not a traceback
        raise DatasetError(f"cannot read the cached file {exc.filename or rec} ({exc.strerror or type(exc).__name__}); "
                           f"make it readable (chmod u+r) or {cache.refetch_hint(name)}") from None


def _checked(rf: RemoteFile, rec: Path, name: str | None) -> bool:
    """usable()'s checks of a cached file (sidecar stamp, else the registry hash)."""
    if cache.quick_check(rec, name):
        return True
    if rf.known_hash and not rf.head_lines:
        actual = cache.hash_of(rec, rf.known_hash)
        if actual != rf.known_hash:
            raise DatasetError(f"{rec} does not match the registry ({actual}, expected {rf.known_hash}); "
                               f"{cache.refetch_hint(name)}")
        cache.try_write_sidecar(rec, unpacked_paths(rf) if rf.unpack else [], sha256=rf.sha256)
    return True


def commit_file(rf: RemoteFile, area: Path) -> list[Path]:
    """Move a staged `rf` (and what was unpacked from it) into the cache and write its sidecar."""
    trash = area / ".trash"
    trash.mkdir(exist_ok=True)
    unpacked = unpacked_paths(rf)
    try:
        if rf.head_lines:
            cache.install(area / head_path(rf).relative_to(cache_dir()), head_path(rf), trash)
            cache.write_sidecar(head_path(rf))
            return unpacked
        dest = cached_path(rf)
        if rf.unpack:  # the folder pooch unpacked into: <file>.unzip / .untar / the .decomp file
            out = unpacked[0] if rf.unpack in ("bz2", "gz") else dest.parent / (dest.name + (".unzip" if rf.unpack == "zip" else ".untar"))
            cache.install(area / out.relative_to(cache_dir()), out, trash)
        cache.install(area / rf.mirror_path, dest, trash)
        cache.write_sidecar(dest, unpacked if rf.unpack else [])
        z = wrapper_zip_path(rf)
        if z is not None and z.is_file():  # a hand-placed wrapper, now unpacked and recorded
            z.unlink()
    except OSError as exc:
        raise _disk_error(cache_dir(), exc) from None
    return unpacked


def fetch_file(rf: RemoteFile, name: Optional[str] = None) -> list[Path]:
    """Local paths for `rf` (fetched, verified and unpacked on first use). No parsing here: a file the
    registry has no hash for should come through load_spec, which parses it before it is cached."""
    if usable(rf, name):
        return unpacked_paths(rf)
    writable_cache()
    with cache.staging_area(cache_dir()) as area:
        stage_file(rf, area)
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
        files = [(record_path(rf), None if rf.head_lines else rf.known_hash) for rf in files_of(spec)]
        if spec.large:  # the converted .npz is what runs read; the raw files may have been cleaned away
            files = [(p, s) for p, s in files if p.is_file()] + [(processed_path(spec), None)]
        checks = [cache.verify(p, sha, name) for p, sha in files]
        bad = [msg for ok, msg in checks if not ok]
        out.append((name, not bad, bad[0] if bad else f"{len(checks)} file(s) ok"))
    return out
