from .protocols import PROTOCOLS, Split, dlm_regression_split
from .registry import DATASETS, Dataset, DatasetError, DatasetSpec, get_spec, load_dataset
from .transforms import Standardizer

__all__ = [
    "DATASETS", "PROTOCOLS", "Dataset", "DatasetError", "DatasetSpec", "Split", "Standardizer",
    "dlm_regression_split", "get_spec", "load_dataset",
]
