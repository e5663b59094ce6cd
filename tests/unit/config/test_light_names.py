"""The light name tables (read by --help, `experiments` and completion without loading the plugins) say what the
registries themselves say."""

from dlm_bench.config.schema import dataset_options, manifest_names
from dlm_bench.data import DATASETS
from dlm_bench.objectives import OBJECTIVES
from dlm_bench.registry.models import MODELS
from dlm_bench.registry.names import MODEL_NAMES, OBJECTIVE_NAMES


def test_dataset_options_are_the_registered_datasets_and_csv():
    assert sorted(manifest_names()) == sorted(DATASETS) and len(DATASETS) > 40
    assert dataset_options() == sorted([*DATASETS, "csv"])


def test_model_and_objective_names_are_the_registries_in_their_order():
    assert MODEL_NAMES == tuple(MODELS)
    assert OBJECTIVE_NAMES == tuple(OBJECTIVES)
