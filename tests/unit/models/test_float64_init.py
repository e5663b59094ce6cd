"""issue 75: a float64 run starts exactly at its configured values. GPyTorch turns `noise = 0.1` into a raw parameter
in that parameter's dtype; a float32 parameter converted by `.double()` afterwards started at 0.0999999954 (noise) and
0.99999999955 (outputscale), moving the objective by 4.4e-8 relative. The reference is the Python float itself."""

import pytest
import torch

from dlm_bench.models.builders import build_bundle
from dlm_bench.sweeps.compose import compose_config


@pytest.mark.parametrize("model, extra", [("svgp", []), ("sgpr", []), ("fitc", []), ("pac_gp", ["objective=pac_kl"]),
                                          ("pac_sgp", ["objective=pac_kl"])])
def test_float64_bundle_starts_at_the_configured_values(model, extra):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(30, 2, generator=g, dtype=torch.float64)
    y = torch.randn(30, generator=g, dtype=torch.float64)
    cfg = compose_config([f"model={model}", *extra, "dtype=float64", "model.noise_init=0.1", "model.outputscale_init=1",
                          "model.lengthscale_init=0.3", "model.num_inducing=5"])
    bundle = build_bundle(cfg, X, y).to(dtype=torch.float64)  # as the harness does
    (kernel,) = [m for m in bundle.modules() if hasattr(m, "raw_outputscale")]
    assert kernel.outputscale.item() == 1.0
    assert kernel.base_kernel.lengthscale.item() == pytest.approx(0.3, rel=1e-15, abs=0)  # softplus round trip: 1 ulp
    assert bundle.noise.item() == 0.1
    assert {p.dtype for p in bundle.parameters()} == {torch.float64}
    assert torch.get_default_dtype() == torch.float32  # the builder leaves the process's default as it was


def test_float32_bundle_is_unchanged():
    """float32 runs build as before: float32 parameters, the configured noise to float32 precision."""
    X, y = torch.randn(20, 2), torch.randn(20)
    bundle = build_bundle(compose_config(["model=svgp", "model.noise_init=0.1", "model.num_inducing=5"]), X, y)
    assert bundle.noise.item() == pytest.approx(0.1, rel=1e-6) and bundle.noise.item() != 0.1
    assert {p.dtype for p in bundle.parameters()} == {torch.float32}
