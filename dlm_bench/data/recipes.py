"""How each catalogued dataset's files become (X, y, feature names[, fixed splits]).

The catalogue itself (URLs, hashes, shapes, descriptions) is data: catalog.yaml, loaded by catalog.py. A catalogue
entry names one function of PARSERS below and, optionally, keyword arguments for it (`parser_args`). Every parser
gets the local paths of the entry's files in catalogue order (a file unpacked from an archive: its members, in the
order listed) and returns X, y, feature names and, optionally, fixed (train, test) index pairs.

The row counts that tests shrink (EPSILON_FP_ROWS, YEARPRED_TRAIN_ROWS) are read when a parser runs.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Callable

import numpy as np

from . import parsers as P
from .transforms import dummy_code

PARSERS: dict[str, Callable] = {}


def parser(fn: Callable) -> Callable:
    PARSERS[fn.__name__] = fn
    return fn


# --------------------------------------------------------------------------- shipped
@parser
def matrix(paths, target: int, columns: list[str] | None = None):
    """A whitespace-separated numeric table: column `target` is y, the others X (named `columns`, else x1, x2, ...)."""
    t = P.read_matrix(paths[0])
    X = np.delete(t, target, axis=1)
    return X, t[:, target], columns or [f"x{i + 1}" for i in range(X.shape[1])]


@parser
def xy_files(paths, columns: list[str] | None = None):
    """(inputs, targets) file pairs, pooled in catalogue order. fgp ships a train/test split; the papers pool it
    (train rows first) and draw their own splits."""
    X = np.vstack([P.read_matrix(p) for p in paths[0::2]])
    y = np.concatenate([P.read_matrix(p)[:, 0] for p in paths[1::2]])
    return X, y, columns or [f"x{i + 1}" for i in range(X.shape[1])]


# --------------------------------------------------------------------------- regression


@parser
def named_columns(paths, columns: list[str], target: str):
    """A comma-separated table with a header: the named feature columns and target column."""
    df = P.read_table(paths[0], sep=",", header=0)
    return df[columns].to_numpy(float), df[target].to_numpy(float), columns


@parser
def lgm_mat(paths):
    """The FP / SGGPM papers' own .mat test problems (rsheth80/lgm_fp_inf): X and y as stored."""
    X, y = P.read_lgm_mat(paths[0])
    return X, y, [f"x{i + 1}" for i in range(X.shape[1])]


SARCOS_COLUMNS = [f"{k}{j}" for k in ("pos", "vel", "acc") for j in range(1, 8)]


def first_unique(t: np.ndarray) -> np.ndarray:
    """Indices of the rows of `t` with exact duplicates left out (first occurrence kept, file order)."""
    return np.sort(np.unique(t, axis=0, return_index=True)[1])

@parser
def sarcos(paths, variables: list[str], dedup: bool = False):
    """GPML sarcos: 21 inputs then 7 torques; the benchmark target is joint 1 (column 22). The files' matrices
    (`variables`, one per file) are pooled (train rows first), as the DLM and PAC-GP papers do. The GPML test file
    repeats training rows (docs/datasets.md), so random splits of the pool put the same row on both sides;
    dedup=True (sarcos_dedup) drops exact duplicate rows (all 28 columns) of the pool before any split."""
    t = np.vstack([np.asarray(P.load_mat(p)[v]) for p, v in zip(paths, variables)]).astype(np.float64)
    if dedup:
        t = t[first_unique(t)]
    return t[:, :21], t[:, 21], SARCOS_COLUMNS


def _year_table(path, skiprows: int | None = None):
    """UCI YearPredictionMSD: year, then 90 timbre features; read in chunks to bound memory."""
    t = np.vstack([c.to_numpy() for c in P.read_table(path, sep=",", skiprows=skiprows, chunksize=100_000,
                                                      dtype=np.float64)])
    return t[:, 1:], t[:, 0], [f"timbre{i + 1}" for i in range(t.shape[1] - 1)]


@parser
def song(paths):
    return _year_table(paths[0])


# UCI: "train: first 463,715 examples; test: last 51,630 examples" (read at parse time so tests can shrink it)
YEARPRED_TRAIN_ROWS = 463715


@parser
def yearpred_fp(paths):
    """FP supp. Table 1: the unique rows of the original test part (51630 rows -> 51609). Uniqueness is over the
    whole row (year + 90 features), within the test part; the first occurrence is kept, file order."""
    X, y, names = _year_table(paths[0], skiprows=YEARPRED_TRAIN_ROWS)
    keep = first_unique(np.column_stack([y, X]))
    return X[keep], y[keep], names


@parser
def libsvm(paths, n_features: int, binary: bool = False, max_rows: int | None = None):
    """LIBSVM sparse files, pooled in catalogue order; binary: labels {-1, +1} -> {0, 1}. madelon_fp (FP supp.
    Table 1: madelon 2600 = NIPS 2003 training (2000) + validation (600) rows) pools LIBSVM's madelon and
    madelon.t (the validation set), training rows first."""
    parts = [P.read_libsvm(p, n_features, max_rows=max_rows) for p in paths]
    X, y = parts[0] if len(parts) == 1 else (np.vstack([X for X, _ in parts]), np.concatenate([y for _, y in parts]))
    if binary:
        y = (y > 0).astype(np.float64)
    return X, y, [f"f{i + 1}" for i in range(n_features)]


# FP supp. Table 1 (read at parse time, so the fixture tests can shrink the row count)
EPSILON_FP_ROWS = 15000


@parser
def epsilon_fp(paths, n_features: int):
    """The first EPSILON_FP_ROWS rows and first `n_features` features of the LIBSVM normalized test file."""
    X, y = P.read_libsvm(paths[0], 2000, max_rows=EPSILON_FP_ROWS)
    return X[:, :n_features], (y > 0).astype(np.float64), [f"f{i + 1}" for i in range(n_features)]


@parser
def epsilon_count_fp(paths, n_features: int, prior_var: float, seed: int):
    """FP supp. Table 1 "epsilon-count": epsilon training features with counts sampled from a Poisson GLM, w drawn
    from the prior. Rule: the first EPSILON_FP_ROWS rows and first `n_features` features of the LIBSVM
    normalized TRAINING file (raw file values, its labels discarded); rng = numpy default_rng(seed);
    w = rng.normal(0, sqrt(prior_var), D) first, then y = rng.poisson(exp(X w)) (catalog.yaml: 500 features,
    prior_var 0.1 = the FP paper's GLM prior w ~ N(0, 0.1 I) (L197), seed 2016)."""
    X, _ = P.read_libsvm(paths[0], 2000, max_rows=EPSILON_FP_ROWS)
    X = X[:, :n_features]
    rng = np.random.default_rng(seed)
    w = rng.normal(0.0, np.sqrt(prior_var), X.shape[1])
    y = rng.poisson(np.exp(X @ w)).astype(np.float64)
    return X, y, [f"f{i + 1}" for i in range(X.shape[1])]


# --------------------------------------------------------------------------- binary
@parser
def keel(paths, scale: float = 1.0):
    t = P.read_matrix(paths[0], sep=",")
    X = t[:, :-1] / scale
    y = (t[:, -1] > 0).astype(np.float64)  # banana {-1,1}, twonorm/ring {0,1} -> {0,1}
    return X, y, [f"x{i + 1}" for i in range(X.shape[1])]


@parser
def thyroid(paths, features: dict[str, int]):
    """`features`: name -> column of the continuous features (catalog.yaml)."""
    t = P.read_table(paths[0], sep=",").dropna(axis=1, how="all").to_numpy(float)  # trailing comma
    X = t[:, list(features.values())]
    y = (t[:, 21] != 3).astype(np.float64)  # 3 = normal; hyper- or hypothyroid -> 1
    return X, y, list(features)


@parser
def airline(paths):
    from .airline import parse_airline

    return parse_airline(paths[0], paths[1])


@parser
def usps35(paths):
    m = P.load_mat(paths[0])
    X = np.hstack([m["train_patterns"], m["test_patterns"]]).T
    labels = np.hstack([m["train_labels"], m["test_labels"]]).argmax(axis=0)  # one-of-10 (+1/-1) rows
    keep = (labels == 3) | (labels == 5)
    return X[keep], (labels[keep] == 3).astype(np.float64), [f"px{i + 1}" for i in range(256)]


@parser
def musk(paths):
    """UCI clean2.data (compress(1)-ed as clean2.data.Z): molecule, conformation, f1..f166, class."""
    raw = Path(paths[0]).read_bytes()
    text = P.unlzw(raw) if raw[:2] == b"\x1f\x9d" else raw
    df = P.read_table(io.BytesIO(text), sep=",")
    X = df.iloc[:, 2:-1].to_numpy(float)  # skip molecule and conformation names
    return X, df.iloc[:, -1].to_numpy(float), [f"f{i + 1}" for i in range(X.shape[1])]


@parser
def uji(paths, target: str):
    """UJIIndoorLoc trainingData.csv: the 520 WAP columns; target "inout" (RELATIVEPOSITION 2 = outside) or
    "long" (LONGITUDE)."""
    df = P.read_table(paths[0], sep=",", header=0)
    waps = [c for c in df.columns if c.startswith("WAP")]
    y = (df["RELATIVEPOSITION"] == 2).to_numpy(float) if target == "inout" else df["LONGITUDE"].to_numpy(float)
    return df[waps].to_numpy(float), y, waps


@parser
def uji_fp(paths, target: str):
    """FP supp. Table 1: UJIIndoorLoc unique rows x 466 (19085 x 466). Rule (this project's reconstruction):
    (1) training file only; (2) rows unique over the 520 WAP columns (first occurrence kept, file order; the
    target of that row is kept), so both targets get the same rows; (3) drop the WAP columns that are constant over
    the kept rows (in UJIIndoorLoc: WAPs never detected, RSSI 100 throughout) -> 466 columns."""
    X, y, waps = uji(paths, target)
    keep_rows = first_unique(X)
    X, y = X[keep_rows], y[keep_rows]
    keep_cols = np.flatnonzero((X != X[:1]).any(axis=0))
    return X[:, keep_cols], y, [waps[j] for j in keep_cols]


@parser
def mnist(paths, odd_even: bool = False):
    X = np.vstack([P.read_idx(paths[0]).reshape(-1, 784), P.read_idx(paths[2]).reshape(-1, 784)]).astype(np.float64)
    y = np.concatenate([P.read_idx(paths[1]), P.read_idx(paths[3])]).astype(np.float64)
    if odd_even:
        y = y % 2  # 1 = odd digit
    n_train = len(P.read_idx(paths[1]))
    split = (np.arange(n_train), np.arange(n_train, len(y)))
    return X, y, [f"px{i + 1}" for i in range(784)], [split]


# --------------------------------------------------------------------------- count / ordinal
@parser
def abalone(paths, columns: list[str]):
    """savigp's copy has sex one-hot as (M, F, I); L-1 coding keeps F and I (M = all zeros); then the 7
    measurements (`columns`) and the rings."""
    t = P.read_matrix(paths[0], sep=",")
    sex = np.array(["M", "F", "I"])[t[:, :3].argmax(axis=1)]
    dummies = np.stack([(sex == "F"), (sex == "I")], axis=1).astype(np.float64)
    return np.hstack([dummies, t[:, 3:10]]), t[:, 10], ["sex_F", "sex_I"] + columns


@parser
def peds(paths, column: int):
    """Chan & Vasconcelos' ucsdpeds_feats/features/Peds1_feats.mat: cell arrays fv{k} (features x frames) and
    cnt{k} (counts per frame). For Peds1, cnt{1} and cnt{2} are the two walking directions and cnt{3} the total
    (public MATLAB code reads Chan.dir{1} = cnt{1}, Chan.dir{2} = cnt{2}, Chan.label = cnt{3}; docs/datasets.md).
    `column` is the 0-based cell index."""
    m = P.load_mat(paths[0], squeeze_me=True)
    fv = np.asarray(m["fv"][column], dtype=np.float64).T  # stored features x frames
    cnt = np.asarray(m["cnt"][column], dtype=np.float64).reshape(-1)
    return fv, cnt, [f"f{i + 1}" for i in range(fv.shape[1])]


@parser
def flares(paths, levels: dict[str, str]):
    # The FP paper (supp. Table 1) and the upstream file name (count_dataset_flares_N1065_D24.mat) say 1065 rows,
    # UCI flare.data2 has 1066. Reconstruction: the UCI file has no header line, so a reader that takes the first
    # line as column names (pandas' header="infer", MATLAB readtable / importdata) loses the first record; this
    # copy has a header added, so its first data row (H A X 1 3 1 1 1 1 1 0 0 0) is dropped here.
    df = P.read_table(paths[0], header=0).iloc[1:]
    blocks, names = [], []
    # `levels`: the categorical columns' levels as declared in flare.names (catalog.yaml)
    for col, cats in levels.items():  # full one-hot 7+6+4, + 7 codes = the FP paper's 24 inputs
        d, n = dummy_code(df[col].to_numpy(), drop_first=False, prefix=f"{col}_", categories=list(cats))
        blocks.append(d)
        names += n
    rest = [c for c in df.columns[3:10]]
    X = np.hstack(blocks + [df[rest].to_numpy(float)])
    return X, df["C"].to_numpy(float), names + rest


@parser
def bank(paths, bins: int):
    df = P.read_table(paths[0], sep=",", header=0)
    target = df["label"].to_numpy(float)
    # Chu & Ghahramani (2005): the continuous target cut into `bins` (10) equal-frequency bins -> levels 1..10.
    # By rank (ties in row order), since 20% of the targets are exactly 0 and value quantiles would merge bins.
    rank = np.empty(len(target), dtype=np.int64)
    rank[np.argsort(target, kind="stable")] = np.arange(len(target))
    y = (rank * bins // len(target)).astype(np.float64) + 1
    cols = [c for c in df.columns if c != "label"]
    return df[cols].to_numpy(float), y, cols


# --------------------------------------------------------------------------- SAVIGP fixed splits
@parser
def savigp_splits(paths, onehot_classes: int = 0):
    """SAVIGP's split files stacked (train_1, test_1, train_2, ...): first column y (or `onehot_classes` one-hot
    columns), then X; each (train_k, test_k) pair becomes one fixed split."""
    tables = [P.read_matrix(p, sep=",") for p in paths]
    t = np.vstack([a[:, ~np.isnan(a).all(axis=0)] for a in tables])  # trailing commas
    y = t[:, :onehot_classes].argmax(axis=1).astype(np.float64) if onehot_classes else t[:, 0]
    X = t[:, max(onehot_classes, 1):]
    ends = np.cumsum([len(a) for a in tables])
    rows = [np.arange(end - len(a), end) for a, end in zip(tables, ends)]
    return X, y, [f"x{i + 1}" for i in range(X.shape[1])], list(zip(rows[0::2], rows[1::2]))
