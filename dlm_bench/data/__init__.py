from . import catalog  # noqa: F401  (registers every dataset)
from .fetch import cache_dir, fetch, fetch_file
from .protocols import PROTOCOLS, Split, dlm_regression_split, make_split
from .registry import (
    DATASETS, Dataset, DatasetError, DatasetSpec, RemoteFile, datasets_table, get_spec, load_dataset, load_from_config,
)
from .transforms import Standardizer, dummy_code
from .user import user_file_sha256

__all__ = [
    "DATASETS", "PROTOCOLS", "Dataset", "DatasetError", "DatasetSpec", "RemoteFile", "Split", "Standardizer",
    "cache_dir", "datasets_table", "dlm_regression_split", "dummy_code", "fetch", "fetch_file", "get_spec",
    "load_dataset", "load_from_config", "make_split", "user_file_sha256",
]
