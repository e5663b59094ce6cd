"""Where a registered dataset would come from on this machine, found once for every caller.

`locate(name)` serves `dlm-bench datasets` (its `phrase`, nothing sent over the network) and, with `probe=True`, the
sweep's data check before any job (sweeps/preflight.py): each remote file is then asked for once (an HTTP HEAD)
so that an unreachable origin is one line before the sweep instead of a failed run.json per point, and the size
is known. Before, the sweep had its own copy of this logic, which did not know hand-placed files: a sweep refused
an archive that `dlm-bench datasets` called "placed by hand" and `dlm-bench fetch` unpacked without network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .datasets import DatasetError, RemoteFile, get_spec
from .fetch import _mb, _missing_source, files_of, hand_placed, is_cached, is_url, mirror, source_of, status

HEAD_TIMEOUT_S = 10.0  # a size/reachability probe; the real download keeps fetch.py's own timeout and retries


@dataclass
class Availability:
    """Where dataset `name` would come from: its state, what a fetch would transfer, and the `datasets` phrase."""

    name: str
    state: str  # shipped | cached | hand (placed by hand) | mirror | download | unavailable
    phrase: str  # the `dlm-bench datasets` column
    nbytes: Optional[int] = None  # what a fetch would transfer, where known (0: nothing)
    reason: str = ""  # why it is unavailable (one line)

    def needs_fetch(self) -> bool:
        """A fetch is still to run: a download, a mirror copy, or a hand-placed file to check and unpack."""
        return self.state in ("hand", "mirror", "download")

    def size_text(self) -> str:
        if self.nbytes == 0:
            return "no transfer"
        return "size unknown" if self.nbytes is None else f"{self.nbytes / 1e6:.1f} MB"

    def origin_text(self) -> str:
        return {"hand": "the file placed by hand", "mirror": "the mirror"}.get(self.state, "its origin")


def head_size(url: str) -> tuple[bool, Optional[int], str]:
    """(reachable, size, why not) of a URL, one HEAD request (redirects followed), no retries. A server that answers
    HEAD with an error (501 Not Implemented, 405, 403) is asked again with a GET of the first byte (the body is not
    read), as fetch would download it: a mirror that serves GET only is reachable. The size is Content-Length, or
    for a 206 answer the total of Content-Range."""
    import requests

    said = ""  # the errors answered so far
    for method, headers in (("HEAD", {}), ("GET", {"Range": "bytes=0-0"})):
        try:
            with requests.request(method, url, headers=headers, stream=True, allow_redirects=True,
                                  timeout=HEAD_TIMEOUT_S) as r:
                if r.status_code >= 400:
                    said += f"{', ' if said else ''}HTTP {r.status_code} to {method}"
                    continue
                total = r.headers.get("Content-Range", "").rpartition("/")[2]
                length = total if r.status_code == 206 else r.headers.get("Content-Length")
                return True, int(length) if length and length.isdigit() else None, ""
        except requests.RequestException as exc:
            why = "no connection" if isinstance(exc, requests.ConnectionError) else type(exc).__name__
            return False, None, f"{said}, {why} to {method}" if said else why
    return False, None, said


def _add(total: Optional[int], size: Optional[int]) -> Optional[int]:
    return None if total is None or size is None else total + size


def _download_phrase(todo: list[RemoteFile]) -> str:
    """'download of N MB' (~ where a size is a guess; 'size unknown'), '+ stream first N rows' for a streamed head."""
    heads = [rf for rf in todo if rf.head_lines]
    full = [rf for rf in todo if not rf.head_lines]
    parts = []
    if full:
        sizes = [rf.size_mb for rf in full]
        if any(x is None for x in sizes):
            parts.append("download, size unknown")
        else:
            parts.append(("download of ~" if any(rf.size is None for rf in full) else "download of ") + _mb(sum(sizes)))
    if heads:
        parts.append(f"stream first {heads[0].head_lines} rows")
    return " + ".join(parts)


def _transfer(name: str, todo: list[RemoteFile], state: str, phrase: str, probe: bool) -> Availability:
    """The bytes a fetch of `todo` (neither cached nor placed by hand) would move; with `probe`, each remote origin
    is asked once and an unreachable one makes the dataset unavailable."""
    total: Optional[int] = 0
    for rf in todo:
        origin = source_of(rf)
        if not is_url(origin):  # a directory mirror (_missing_source has checked the file is there)
            total = _add(total, Path(origin).stat().st_size)
            continue
        size = None if rf.head_lines else rf.size  # a streamed head stops early: its transfer is not known
        if probe:
            ok, length, why = head_size(origin)
            if not ok:
                return Availability(name, "unavailable", phrase, reason=f"cannot reach {origin} ({why})")
            size = None if rf.head_lines else (length if length is not None else size)
        total = _add(total, size)
    return Availability(name, state, phrase, total)


def locate(name: str, probe: bool = False) -> Availability:
    """Shipped, cached, placed by hand, in the mirror, downloadable (of N bytes) or unavailable (and why), without
    fetching. probe=False sends nothing over the network: a URL mirror is assumed to hold every file and a URL to
    answer, with the registry's size."""
    try:
        spec = get_spec(name)
    except DatasetError as err:
        return Availability(name, "unavailable", "unknown dataset", reason=str(err))
    state = status(spec)
    if state in ("shipped", "cached"):
        return Availability(name, state, state, 0)
    if state != "not cached":  # changed in the cache since it was fetched
        return Availability(name, "unavailable", state, reason=f"the cached copy {state}")
    if not spec.files:
        return Availability(name, "unavailable", "no known source", reason="no known source")
    missing = [rf for rf in files_of(spec) if not is_cached(rf)]
    for rf in missing:
        why = _missing_source(rf)
        if why:
            return Availability(name, "unavailable", f"no known source ({why})", reason=f"{rf.mirror_path}: {why}")
    todo = [rf for rf in missing if hand_placed(rf) is None]
    if not todo:
        return Availability(name, "hand", "placed by hand", 0)
    if mirror():
        return _transfer(name, todo, "mirror", "in mirror", probe)
    return _transfer(name, todo, "download", _download_phrase(todo), probe)


def availability(name: str) -> str:
    """`dlm-bench datasets`'s phrase for `name`: "shipped", "cached", "changed (fetch --force)", "placed by hand",
    "in mirror", "download of N MB" (or "~N MB", "size unknown", "+ stream first N rows"), "no known source (...)"."""
    return locate(name).phrase
