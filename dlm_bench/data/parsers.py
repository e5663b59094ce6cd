"""Readers for the upstream file formats (text tables, Matlab .mat, LIBSVM, idx, Unix .Z).

pandas and scipy are imported by the readers that use them: the dataset registry imports this module, and
`dlm-bench datasets` lists the registry without reading a file.
"""

from __future__ import annotations

import bz2
import gzip
import struct
from pathlib import Path

import numpy as np


def read_table(path: Path, sep: str | None = None, header=None, **kw) -> "pd.DataFrame":
    """Text table; sep None means runs of whitespace. Compression is inferred from the suffix."""
    import pandas as pd

    if sep is None:
        return pd.read_csv(path, sep=r"\s+", header=header, **kw)
    return pd.read_csv(path, sep=sep, header=header, skipinitialspace=True, **kw)


def read_matrix(path: Path, sep: str | None = None) -> np.ndarray:
    return read_table(path, sep=sep).to_numpy(dtype=np.float64)


def read_lgm_mat(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """rsheth80/lgm_fp_inf test problems: struct `data` with xt (N x D, maybe sparse) and yt (N)."""
    import scipy.sparse

    data = load_mat(path, squeeze_me=True, struct_as_record=False)["data"]
    X = data.xt
    if scipy.sparse.issparse(X):
        X = X.toarray()
    return np.asarray(X, dtype=np.float64), np.asarray(data.yt, dtype=np.float64).reshape(-1)


def load_mat(path: Path, **kw) -> dict:
    """scipy.io.loadmat, imported here on use (the registry imports this module without scipy)."""
    import scipy.io

    return scipy.io.loadmat(path, **kw)


def read_libsvm(path: Path, n_features: int, max_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """LIBSVM sparse text ("label idx:val ..." with 1-based idx) -> dense float64 X, y."""
    opener = {".bz2": bz2.open, ".gz": gzip.open}.get(Path(path).suffix, open)
    labels, rows, cols, vals = [], [], [], []
    with opener(path, "rt") as f:
        for i, line in enumerate(f):
            if max_rows is not None and i >= max_rows:
                break
            parts = line.split()
            if not parts:
                continue
            labels.append(float(parts[0]))
            r = len(labels) - 1
            for tok in parts[1:]:
                j, v = tok.split(":", 1)
                rows.append(r)
                cols.append(int(j) - 1)
                vals.append(float(v))
    X = np.zeros((len(labels), n_features))
    if rows:
        cols_a = np.asarray(cols)
        if cols_a.max() >= n_features:
            raise ValueError(f"feature index {cols_a.max() + 1} > {n_features} in {path.name}")
        X[np.asarray(rows), cols_a] = vals
    return X, np.asarray(labels)


def read_idx(path: Path) -> np.ndarray:
    """MNIST idx format (optionally gzipped): big-endian magic, dims, uint8 payload."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        zero, dtype, ndim = struct.unpack(">HBB", f.read(4))
        if zero != 0 or dtype != 0x08:
            raise ValueError(f"{path.name} is not an idx uint8 file")
        dims = struct.unpack(">" + "I" * ndim, f.read(4 * ndim))
        data = np.frombuffer(f.read(), dtype=np.uint8)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path.name}: {data.size} values for dims {dims} (truncated?)")
    return data.reshape(dims)


def unlzw(data: bytes) -> bytes:
    """Decompress Unix `compress` (.Z, LZW) data; the UCI musk files are distributed this way."""
    if len(data) < 3 or data[0] != 0x1F or data[1] != 0x9D:
        raise ValueError("not a .Z (LZW) file")
    maxbits = data[2] & 0x1F
    block = bool(data[2] & 0x80)
    out = bytearray()
    table = [bytes([i]) for i in range(256)]
    if block:
        table.append(b"")  # code 256 = CLEAR
    bits, pos, nbits, bitbuf, prev = 9, 3, 0, 0, None
    group_start = pos  # codes are read in groups of `bits` bytes; a width change skips the group's rest
    n = len(data)
    while True:
        while nbits < bits and pos < n:
            bitbuf |= data[pos] << nbits
            pos += 1
            nbits += 8
        if nbits < bits:
            break
        code = bitbuf & ((1 << bits) - 1)
        bitbuf >>= bits
        nbits -= bits
        if block and code == 256:
            table = table[:257]
            pos += (group_start - pos) % bits  # skip to the end of the current group of `bits` codes
            bitbuf, nbits, bits, prev = 0, 0, 9, None
            group_start = pos
            continue
        if code < len(table):
            entry = table[code]
            if prev is not None:
                table.append(prev + entry[:1])
        elif prev is not None and code == len(table):
            entry = prev + prev[:1]
            table.append(entry)
        else:
            raise ValueError("corrupt .Z data")
        out += entry
        prev = entry
        if len(table) >= (1 << bits) and bits < maxbits:
            pos += (group_start - pos) % bits  # the same skip at a width change
            bitbuf, nbits = 0, 0
            bits += 1
            group_start = pos
    return bytes(out)
