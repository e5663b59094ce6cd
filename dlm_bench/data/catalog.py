"""Every dataset the five papers use, loaded from catalog.yaml (the manifest: URL, hash, size, evidence, shape,
parser name per entry). The parsers themselves are code (recipes.py); this module only turns the manifest into
RemoteFile / DatasetSpec objects and registers them. A malformed manifest fails at import with the entry named.
"""

from __future__ import annotations

import dataclasses
import functools
from importlib import resources

import yaml

from . import recipes
from .datasets import DatasetSpec, RemoteFile, register

MANIFEST = "catalog.yaml"
FILE_KEYS = {"url", "hash", "size", "approx_mb", "member", "unpack", "members", "head_lines", "large_download",
             "evidence", "copy_of"}
DATASET_KEYS = {"task", "papers", "shape", "parser", "parser_args", "files", "shipped", "large", "description",
                "source"}


def _evidence(e) -> str:
    if not e:
        return ""
    if isinstance(e, dict):
        return f"{e.get('source', '')} ({e.get('date', 'undated')})"
    return str(e)


def remote_file(path: str, e: dict) -> RemoteFile:
    unknown = set(e) - FILE_KEYS
    if unknown:
        raise ValueError(f"{MANIFEST}: file {path}: unknown key(s) {sorted(unknown)}")
    return RemoteFile(
        url=e["url"], known_hash=e.get("hash"), mirror_path=path, unpack=e.get("unpack"),
        members=tuple(e["members"]) if e.get("members") else None, size=e.get("size"), approx_mb=e.get("approx_mb"),
        member=e.get("member"), head_lines=e.get("head_lines"), large_download=bool(e.get("large_download", False)),
        evidence=_evidence(e.get("evidence")),
    )


def spec_from_entry(name: str, d: dict, files: dict[str, RemoteFile]) -> DatasetSpec:
    unknown = set(d) - DATASET_KEYS
    if unknown:
        raise ValueError(f"{MANIFEST}: dataset {name}: unknown key(s) {sorted(unknown)}")
    if d["parser"] not in recipes.PARSERS:
        raise ValueError(f"{MANIFEST}: dataset {name}: parser {d['parser']!r} is not in recipes.PARSERS")
    missing = [f for f in d.get("files", ()) if f not in files]
    if missing:
        raise ValueError(f"{MANIFEST}: dataset {name}: file(s) {missing} are not listed under files:")
    n, dim = d["shape"]
    return DatasetSpec(
        name, d["task"], tuple(d["papers"]), (n, dim),
        functools.partial(recipes.PARSERS[d["parser"]], **(d.get("parser_args") or {})),
        files=tuple(files[f] for f in d.get("files", ())), shipped=tuple(d.get("shipped", ())),
        description=d.get("description", ""), source=d.get("source", ""), large=bool(d.get("large", False)),
        parser_name=d["parser"],
    )


def load_manifest() -> dict:
    return yaml.safe_load(resources.files("dlm_bench.data").joinpath(MANIFEST).read_text())


def attach_copies(entries: dict, files: dict[str, RemoteFile]) -> dict[str, RemoteFile]:
    """A file entry with `copy_of: PATH` is another archive of PATH's members (its own hash and member names):
    it becomes one of PATH's `copies`, which fetch.choose uses in PATH's place where the copy is here and PATH is
    not. PATH stays the canonical download."""
    for path, e in entries.items():
        target = e.get("copy_of")
        if target is None:
            continue
        if target not in files or entries[target].get("copy_of"):
            raise ValueError(f"{MANIFEST}: file {path}: copy_of {target!r} is not a canonical file listed under files:")
        files[target] = dataclasses.replace(files[target], copies=files[target].copies + (files[path],))
    return files


def register_all() -> None:
    doc = load_manifest()
    files = attach_copies(doc["files"], {path: remote_file(path, e) for path, e in doc["files"].items()})
    for name, d in doc["datasets"].items():
        register(spec_from_entry(name, d, files))


register_all()
