"""Every file under conf/ composes against the schema; run names are deterministic."""

import pytest

from dlm_bench.cli import compose_config
from dlm_bench.config import GROUPS, conf_dir, group_options
from dlm_bench.runner import run_name

CASES = [f"{g}={o}" for g in GROUPS for o in group_options(g)] + [
    f"experiment={o}" for o in group_options("experiment")
]


def test_every_conf_file_is_covered():
    yaml_files = {p.relative_to(conf_dir()).as_posix() for p in conf_dir().rglob("*.yaml")}
    covered = {"config.yaml"} | {f"{c.split('=')[0].lstrip('+')}/{c.split('=')[1]}.yaml" for c in CASES}
    assert yaml_files <= covered  # (dataset options come from the registry, not from files)


@pytest.mark.parametrize("override", CASES)
def test_conf_file_composes(override):
    cfg = compose_config([override])
    assert cfg.dataset.name and cfg.model.name and cfg.objective.name


def test_run_name_is_deterministic_and_config_sensitive():
    a = run_name(compose_config(["seed=1"]))
    assert a == run_name(compose_config(["seed=1", "trainer.progress=off"]))
    assert a != run_name(compose_config(["seed=1", "trainer.lr=0.01"]))
    assert a.startswith("boston_svgp_elbo_beta1_seed1_")
