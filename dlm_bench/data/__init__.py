from .protocols import PROTOCOLS, Split, dlm_regression_split, make_split
from .registry import DATASETS, Dataset, DatasetError, DatasetSpec, get_spec, load_dataset, load_from_config
from .transforms import Standardizer

__all__ = [
    "DATASETS", "PROTOCOLS", "Dataset", "DatasetError", "DatasetSpec", "Split", "Standardizer",
    "dlm_regression_split", "get_spec", "load_dataset", "load_from_config", "make_split",
]
