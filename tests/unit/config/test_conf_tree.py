"""Every file under conf/ composes against the schema; run names are deterministic."""

import pytest
from omegaconf import OmegaConf

from dlm_bench.config.schema import GROUPS, conf_dir, group_options
from dlm_bench.run import run_name
from dlm_bench.sweeps.compose import compose_config

CASES = [f"{g}={o}" for g in GROUPS for o in group_options(g)] + [
    f"experiment={o}" for o in group_options("experiment")
]


def test_every_conf_file_is_covered():
    yaml_files = {p.relative_to(conf_dir()).as_posix() for p in conf_dir().rglob("*.yaml")}
    covered = {"config.yaml"} | {f"{c.split('=')[0].lstrip('+')}/{c.split('=')[1]}.yaml" for c in CASES}
    assert yaml_files <= covered  # (dataset options come from the registry, not from files)


def _file_leaves(group: str, option: str) -> dict:
    """dotted key (in the composed config) -> value, for every leaf the option's yaml file sets: first what its
    defaults list brings in (`override /group: option`, or another option of its own group), then its own
    values (which win, Hydra's `_self_` last). The hydra section is left out."""
    if group == "dataset":  # options generated from the dataset registry
        return {"dataset.name": option}
    path = conf_dir() / group / f"{option}.yaml"
    node = OmegaConf.load(path)
    glob = "@package _global_" in path.read_text().split("\n", 1)[0]
    out = {}
    for entry in node.get("defaults", []):
        if isinstance(entry, str) and entry != "_self_":
            out.update(_file_leaves(group, entry))
        elif not isinstance(entry, str):
            for k, v in entry.items():
                if k.removeprefix("override ").lstrip("/").startswith("hydra/"):
                    continue  # Hydra's own plugins (the launcher group picks one)
                out.update(_file_leaves(k.removeprefix("override ").lstrip("/"), v))

    def walk(n, prefix):
        for k, v in n.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict):
                walk(v, key)
            elif prefix or k not in ("defaults", "hydra"):
                out[key] = v

    # unresolved: a value may interpolate a key of the composed config (pac_appF_draws: dataset.path has ${seed})
    raw = OmegaConf.to_container(node, resolve=False)
    walk({k: v for k, v in raw.items() if k not in ("defaults", "hydra")}, "" if glob else group)
    return out


@pytest.mark.parametrize("override", CASES)
def test_conf_file_composes_to_what_it_sets(override):
    """Each option composes, and the composed config has every value its yaml file sets (an experiment's own
    values win over the groups it overrides; a dataset option, generated from the registry, names itself); an
    experiment names a report spec that exists (checked here, on the same composition)."""
    from dlm_bench.report.layouts import SPECS

    group, option = override.split("=")
    cfg = compose_config([override])
    if group == "experiment":
        assert cfg.report in SPECS, f"{option}: report={cfg.report!r}"
    composed = OmegaConf.to_container(cfg, resolve=False, enum_to_str=True)
    leaves = _file_leaves(group, option)
    assert leaves, f"{group}/{option}.yaml sets nothing"
    for key, want in leaves.items():
        got = composed
        for part in key.split("."):
            got = got[part]
        assert got == want or (isinstance(want, float) and got == pytest.approx(want)), (override, key, got, want)


def test_run_name_is_deterministic_and_config_sensitive():
    a = run_name(compose_config(["seed=1"]))
    assert a == run_name(compose_config(["seed=1", "trainer.progress=off"])) == run_name(compose_config(["seed=1", "trainer.progress=lines"]))
    assert a != run_name(compose_config(["seed=1", "trainer.lr=0.01"]))
    assert a.startswith("boston_svgp_elbo_beta1_seed1_")
