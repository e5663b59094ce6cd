from . import catalog
from .api import datasets_table, fetch, load_dataset, load_from_config, load_spec, verify
from .datasets import DATASETS, Dataset, DatasetError, DatasetSpec, RemoteFile, get_spec
from .availability import Availability, availability, locate
from .fetch import cache_dir, fetch_file, require
from .protocols import PROTOCOLS, Split, dlm_regression_split, make_split
from .transforms import Standardizer, dummy_code

__all__ = [
    "DATASETS", "PROTOCOLS", "Dataset", "DatasetError", "DatasetSpec", "RemoteFile", "Split", "Standardizer",
    "Availability", "availability", "locate", "cache_dir", "datasets_table", "require", "dlm_regression_split", "dummy_code", "fetch", "fetch_file", "get_spec",
    "load_dataset", "load_from_config", "load_spec", "make_split", "verify", "user_file_sha256",
]


def __getattr__(name: str):
    """user_file_sha256 on first use (PEP 562): data/user.py imports pandas, which `dlm-bench datasets` and the
    registry's names do not need."""
    if name == "user_file_sha256":
        from .user import user_file_sha256

        return user_file_sha256
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
