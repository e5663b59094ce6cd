"""`model.noise_floor` (models/components.py gaussian_likelihood): every regression model's Gaussian noise variance
is bounded below by it, and an exact GP on noise-free data -- whose maximum-likelihood noise variance tends to 0 --
ends at that floor, not at GPyTorch's default 1e-4 (the App. E test of Reeb et al. 2018: PAC_GP's floor is 1e-6)."""

import pytest
import torch

from dlm_bench.errors import ConfigError
from dlm_bench.models.builders import build_bundle
from dlm_bench.models.plugin import check_config
from dlm_bench.models.task_defaults import resolve_task_defaults
from dlm_bench.run.context import seed_everything
from dlm_bench.sweeps.compose import compose_config


def bundle_for(overrides, X, y):
    cfg = compose_config(["dataset=boston", "model.num_inducing=5", "trainer.progress=off", *overrides])
    resolve_task_defaults(cfg)
    seed_everything(0)
    return cfg, build_bundle(cfg, X, y).double()


def noise_modules(bundle):
    return [m for _, m in bundle.named_modules() if hasattr(m, "noise_covar")]


@pytest.mark.parametrize("preset", ["model=sgpr", "model=fitc", "model=exact_gp", "model=svgp",
                                    "method=kl_pac_sgp", "method=kl_pac_gp"])
@pytest.mark.parametrize("floor", [None, 1e-6])
def test_every_gaussian_model_uses_the_floor(preset, floor):
    g = torch.Generator().manual_seed(0)
    X, y = torch.randn(30, 2, generator=g, dtype=torch.float64), torch.randn(30, generator=g, dtype=torch.float64)
    _, bundle = bundle_for([preset] + ([] if floor is None else [f"model.noise_floor={floor}"]), X, y)
    (lik,) = noise_modules(bundle)
    expected = 1e-4 if floor is None else floor  # None: GPyTorch's own default
    assert float(lik.noise_covar.raw_noise_constraint.lower_bound) == pytest.approx(expected, rel=1e-6)
    lik.noise = 3 * expected  # representable just above the floor, and read back
    assert float(lik.noise.detach()) == pytest.approx(3 * expected, rel=1e-6)


def test_noise_free_exact_gp_ends_at_the_floor():
    X = torch.linspace(-2, 2, 12, dtype=torch.float64).unsqueeze(-1)
    y = torch.sin(2 * X.squeeze(-1))  # noise-free: the likelihood rises as the noise variance falls
    ends = {}
    for floor in (1e-4, 1e-7):
        _, bundle = bundle_for(["model=exact_gp", f"model.noise_floor={floor}", "model.noise_init=0.01"], X, y)
        bundle.train()
        opt = torch.optim.Adam(bundle.parameters(), lr=0.05)
        for _ in range(600):
            opt.zero_grad()
            bundle.loss(X, y).backward()
            opt.step()
        ends[floor] = float(noise_modules(bundle)[0].noise.detach())
    assert 1e-4 <= ends[1e-4] < 1.5e-4  # stopped by the default floor
    assert ends[1e-7] < 1e-5  # well below the default floor once the floor allows it


def test_noise_init_must_lie_above_the_floor():
    cfg = compose_config(["dataset=boston", "model=sgpr", "model.noise_floor=1e-3", "model.noise_init=1e-3"])
    with pytest.raises(ConfigError, match="noise_floor"):
        check_config(cfg)
