"""Reusable test helpers, imported by test files (test files never import from each other): contract checks
that every entry of a registry runs (a newly registered entry is tested without editing the tests), the
independent references they compare against, a small SVGP problem, generated CSV tables, the CLI command.

Layout: tests/unit/ checks pieces against independent references (fast); tests/integration/ trains end to end
(runner.execute, the CLI, sweeps). Registry contracts: tests/unit/likelihoods/test_likelihood_contract.py (LIKELIHOODS),
tests/unit/estimators/test_estimator_contract.py (ESTIMATORS), tests/integration/test_model_contract.py (MODELS)."""

from __future__ import annotations

import math
import unittest

import numpy as np
import torch
from gpytorch.distributions import MultivariateNormal
from gpytorch.test.base_likelihood_test_case import BaseLikelihoodTestCase

from dlm_bench.training import gpytorch_internals

# --- likelihood registry ----------------------------------------------------------------------------


def make_likelihood(cls, dtype=torch.float64, noise: float = 0.5):
    """An instance of a registered likelihood class; a noise / squared scale (if it has one) set to `noise`."""
    lik = cls().to(dtype)
    if hasattr(lik, "noise"):
        lik.noise = noise
    return lik


@torch.no_grad()
def sample_targets(likelihood, f: torch.Tensor) -> torch.Tensor:
    """y ~ p(y|f) from the likelihood's own conditional distribution (valid targets for any support)."""
    return likelihood.forward(f).sample()


def gpytorch_likelihood_test_cases(registry: dict, prefix: str = "TestGPyTorchLikelihood",
                                   input_scale: float = 1.0) -> dict:
    """One GPyTorch BaseLikelihoodTestCase subclass per registered likelihood (name -> class), its tests
    unmodified; only the inputs are ours: targets drawn from the likelihood itself (GPyTorch's default targets
    are standard normal, outside the support of a Bernoulli or Poisson likelihood), and q(f) = GPyTorch's
    default N(m, A A^T + I) with the covariance scaled by input_scale^2."""
    cases = {}
    for name, cls in registry.items():
        def create_likelihood(self, _cls=cls, **kwargs):
            return _cls(**kwargs)

        def _create_targets(self, batch_shape=torch.Size(), _cls=cls):
            return sample_targets(_cls(), torch.randn(*batch_shape, 5))

        def _create_marginal_input(self, batch_shape=torch.Size()):
            q = BaseLikelihoodTestCase._create_marginal_input(self, batch_shape)
            return MultivariateNormal(q.mean, q.covariance_matrix * input_scale**2)

        cases[f"{prefix}_{name}"] = type(f"{prefix}_{name}", (BaseLikelihoodTestCase, unittest.TestCase), {
            "seed": 1, "create_likelihood": create_likelihood, "_create_targets": _create_targets,
            "_create_marginal_input": _create_marginal_input,
        })
    return cases


# --- dense float64 grid references ------------------------------------------------------------------


def dense_f_grid(mu: float, var: float, reach: float = 30.0, num: int = 300001) -> tuple[np.ndarray, np.ndarray]:
    """A float64 grid over f covering N(mu, var) (+-12 sd) and [-reach, reach] (where the likelihood peaks
    for the targets used), with trapezoid weights."""
    sd = math.sqrt(var)
    f = np.linspace(min(mu - 12 * sd, -reach), max(mu + 12 * sd, reach), num)
    w = np.full_like(f, f[1] - f[0])
    w[0] = w[-1] = w[0] / 2
    return f, w


def normal_logpdf(f, mu, var):
    return -0.5 * (np.log(2 * np.pi * var) + (f - mu) ** 2 / var)


@torch.no_grad()
def grid_log_marginal(likelihood, y: float, mu: float, var: float) -> float:
    """log int N(f|mu,var) p(y|f) df, trapezoid rule in log space, with p(y|f) = forward(f).log_prob(y)."""
    f, w = dense_f_grid(mu, var)
    ft = torch.as_tensor(f, dtype=torch.float64)
    log_p = likelihood.forward(ft).log_prob(torch.full_like(ft, y)).numpy()
    a = normal_logpdf(f, mu, var) + log_p + np.log(w)
    m = a.max()
    return float(m + np.log(np.exp(a - m).sum()))


@torch.no_grad()
def grid_expectation(fn, mu: float, var: float) -> float:
    """int N(f|mu,var) fn(f) df (fn: float64 tensor -> tensor), trapezoid rule."""
    f, w = dense_f_grid(mu, var)
    values = fn(torch.as_tensor(f, dtype=torch.float64)).numpy()
    return float((np.exp(normal_logpdf(f, mu, var)) * w * values).sum())


# --- the command line -------------------------------------------------------------------------------


def cli_command() -> list[str]:
    """`dlm-bench` from the venv running the tests."""
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "dlm-bench"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dlm_bench.cli"]


# --- a small SVGP problem with a set q(u) (objective and estimator tests) ---------------------------

JITTER = 1e-8


def make_problem(seed, n=40, d=3, m=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X.sum(1)) + 0.3 * rng.normal(size=n)
    Z = rng.normal(size=(m, d))
    return rng, X, y, Z


def build(Z, whiten, lengthscale, outputscale, noise, likelihood=None):
    """A float64 SVGP (RBF kernel, zero mean, jitter JITTER) on inducing inputs Z and a likelihood (default:
    Gaussian with the given noise)."""
    import gpytorch

    from dlm_bench.config.schema import Kernel, MeanFunction
    from dlm_bench.models.components import make_kernel
    from dlm_bench.models.svgp import SVGP

    kernel = make_kernel(Kernel.rbf, None)
    model = SVGP(torch.as_tensor(Z), kernel, MeanFunction.zero, learn_inducing=True, whiten=whiten).double()
    model.variational_strategy.jitter_val = JITTER
    kernel.base_kernel.lengthscale = lengthscale
    kernel.outputscale = outputscale
    if likelihood is None:
        likelihood = gpytorch.likelihoods.GaussianLikelihood().double()
        likelihood.noise = noise
    return model, likelihood


def set_q(model, m, S):
    q = gpytorch_internals.q_u_module(model.variational_strategy)
    # otherwise the first training-mode call re-initialises q(u) to the prior
    model.variational_strategy.variational_params_initialized.fill_(1)
    with torch.no_grad():
        q.variational_mean.copy_(torch.as_tensor(m))
        q.chol_variational_covar.copy_(torch.as_tensor(np.linalg.cholesky(S)))


# --- small generated CSV tables (runs without downloads) --------------------------------------------


def write_glm_tables(d):
    """binary.csv and count.csv (240 rows, columns a, b, y) under the folder d."""
    import pandas as pd

    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 2))
    f = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": (f + 0.3 * rng.normal(size=240) > 0).astype(int)}).to_csv(
        d / "binary.csv", index=False)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": rng.poisson(np.exp(1 + f))}).to_csv(d / "count.csv", index=False)
    return d


def glm_overrides(tables, task, tmp_path, *extra):
    """A short run on one of write_glm_tables' tables."""
    return [f"dataset=csv", f"dataset.path={tables / (task + '.csv')}", "dataset.target=y", f"dataset.task={task}",
            "protocol=dlm_classification", "protocol.train_size=150", "protocol.test_size=60", "model.num_inducing=10",
            f"results_dir={tmp_path}", "trainer.max_iters=15", "trainer.progress=off", *extra]


def write_regression_csv(path, n=60, d=2, seed=0):
    """A small regression table (columns x0..x{d-1}, y): y = sin(2 x0) + 0.5 x1 + noise."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, d))
    y = np.sin(2 * X[:, 0]) + (0.5 * X[:, 1] if d > 1 else 0) + 0.1 * rng.normal(size=n)
    pd.DataFrame({**{f"x{i}": X[:, i] for i in range(d)}, "y": y}).to_csv(path, index=False)
    return path


# --- composed experiment grids ----------------------------------------------------------------------


def sweeper_params(experiment: str) -> dict:
    """hydra.sweeper.params as Hydra composes them (a smoke variant inherits its full variant's grid)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    from dlm_bench.config.schema import conf_dir
    from dlm_bench.sweeps.compose import register_configs

    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"experiment={experiment}"], return_hydra_config=True)
    params = cfg.hydra.sweeper.params
    return OmegaConf.to_container(params) if params is not None else {}  # a one-run experiment (savigp_fig4)


def assert_batched_member_equals(ra: dict, rb: dict, name: str = "") -> None:
    """run.json of an unbatched run (ra) and of the same run trained as a batched member (rb): same status,
    beta and iterations, final loss to 1e-9 and every metric to 1e-6 (relative)."""
    import pytest

    assert ra["status"] == rb["status"] == "ok" and ra["beta"] == rb["beta"]
    assert ra["train"]["iterations"] == rb["train"]["iterations"]
    assert rb["train"]["final_loss"] == pytest.approx(ra["train"]["final_loss"], rel=1e-9)
    assert set(ra["metrics"]) == set(rb["metrics"])
    for m, v in ra["metrics"].items():
        assert rb["metrics"][m] == pytest.approx(v, rel=1e-6), (name, m)


def perturb_batched_members(batch, seed: int = 1, skip_frozen: bool = False) -> None:
    """Move a BatchedBundle's members apart: each gets its own kernel, mean, Z, noise and q(u), the Cholesky factor
    a scaled identity plus noise (garbage above the diagonal too, which q(u) masks). skip_frozen: leave the
    parameters that do not train (a fixed member's hyperparameters) as they are."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in batch.named_parameters():
            if name.endswith("chol_variational_covar"):
                b, m = p.shape[0], p.shape[-1]
                p.copy_(torch.eye(m, dtype=p.dtype) * (0.5 + torch.rand(b, 1, 1, generator=g, dtype=p.dtype))
                        + 0.1 * torch.randn(p.shape, generator=g, dtype=p.dtype))
            elif not (skip_frozen and not p.requires_grad):
                p.add_(0.3 * torch.randn(p.shape, generator=g, dtype=p.dtype))


# --- dense-grid float64 references for the accuracy contract (issue 26) --------------------------------


def _simpson_weights(n: int) -> np.ndarray:
    w = np.ones(n)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return w / 3.0


def _tilted_peak(log_density, mu: np.ndarray, sd: np.ndarray, reach: float = 1e6, num: int = 4001,
                 refine: int = 3) -> np.ndarray:
    """argmax over f of log_density(f) (cases, points) -> (cases, points), found by a sinh-spaced scan from mu
    out to +-reach sd, refined `refine` times on uniform grids between the argmax's neighbours."""
    t = np.linspace(-np.arcsinh(reach), np.arcsinh(reach), num)
    f = mu[:, None] + sd[:, None] * np.sinh(t)[None, :]
    for _ in range(refine + 1):
        ld = np.nan_to_num(log_density(f), nan=-np.inf)
        k = np.clip(ld.argmax(1), 1, f.shape[1] - 2)
        rows = np.arange(len(mu))
        a, b = f[rows, k - 1], f[rows, k + 1]
        best = f[rows, ld.argmax(1)]
        f = a[:, None] + (b - a)[:, None] * np.linspace(0, 1, 401)[None, :]
    return best


@torch.no_grad()
def _dense_segments(log_density, mu, sd, num_q: int, num_peak: int):
    """Nodes (cases, K) and Simpson weights of a domain decomposition: [mu - 14 sd, mu + 14 sd] with num_q
    points, plus the parts of [c - 40 s, c + 40 s] (c the tilted density's argmax, s its curvature width, at
    most sd) outside it, num_peak points each; the peak window replaces the q window where they overlap."""
    c = _tilted_peak(log_density, mu, sd)
    h = 1e-4 * sd
    l0, lp, lm = (log_density(x[:, None])[:, 0] for x in (c, c + h, c - h))
    curv = -(lp + lm - 2 * l0) / h**2
    s = np.where(np.isfinite(curv) & (curv > 0), 1 / np.sqrt(np.maximum(curv, 1e-300)), sd)
    s = np.minimum(s, sd)
    L, R = c - 40 * s, c + 40 * s
    qa, qb = mu - 14 * sd, mu + 14 * sd
    pieces = []

    def piece(a, b, n):
        t = np.linspace(0, 1, n)
        return a[:, None] + (b - a)[:, None] * t, (b - a)[:, None] / (n - 1) * _simpson_weights(n)[None, :]

    # q window minus the peak window: [qa, min(qb, L)] and [max(qa, R), qb], then the peak window
    pieces.append(piece(qa, np.maximum(qa, np.minimum(qb, L)), num_q))
    pieces.append(piece(np.minimum(qb, np.maximum(qa, R)), qb, num_q))
    pieces.append(piece(L, R, num_peak))
    f = np.concatenate([p[0] for p in pieces], 1)
    w = np.concatenate([p[1] for p in pieces], 1)
    return f, w


def dense_reference(likelihood, y, mu, var, num_q: int = 100001, num_peak: int = 20001, chunk: int = 16):
    """Dense-grid float64 references per case, integrand forward(f).log_prob(y) (torch.distributions, not the
    code's log_prob_f), Simpson's rule on the domain decomposition of `_dense_segments`:
    dict of arrays: elp, elp_dmu, elp_dvar, lm, lm_dmu, lm_dvar and, for each of the likelihood's own
    parameters (name -> gradient of elp / lm). Gradients in (mu, var): the rule applied to the exact
    derivative of the integrand (autograd through N(f|mu, var) at fixed nodes); in the likelihood's
    parameters: autograd through torch's log_prob."""
    y, mu, var = (np.asarray(a, dtype=np.float64) for a in np.broadcast_arrays(y, mu, var))
    params = [(n, p) for n, p in likelihood.named_parameters()]
    out = {k: [] for k in ("elp", "elp_dmu", "elp_dvar", "lm", "lm_dmu", "lm_dvar")}
    for n, _ in params:
        out[f"elp_d{n}"], out[f"lm_d{n}"] = [], []
    for i in range(0, len(y), chunk):
        yy, mm, vv = y[i:i + chunk], mu[i:i + chunk], var[i:i + chunk]
        sd = np.sqrt(vv)

        def log_density(f, yy=yy, mm=mm, vv=vv):
            ft = torch.as_tensor(f)
            with torch.no_grad():
                lp = likelihood.forward(ft).log_prob(torch.as_tensor(yy)[:, None].expand_as(ft)).numpy()
            return lp - 0.5 * (np.log(2 * np.pi * vv[:, None]) + (f - mm[:, None]) ** 2 / vv[:, None])

        f, w = _dense_segments(log_density, mm, sd, num_q, num_peak)
        ft, lw = torch.as_tensor(f), torch.log(torch.as_tensor(w))
        m_t = torch.tensor(mm, requires_grad=True)
        v_t = torch.tensor(vv, requires_grad=True)
        log_q = -0.5 * (math.log(2 * math.pi) + torch.log(v_t)[:, None] + (ft - m_t[:, None]) ** 2 / v_t[:, None])
        log_p = likelihood.forward(ft).log_prob(torch.as_tensor(yy)[:, None].expand_as(ft))
        pw = torch.exp(lw + log_q)
        elp = torch.where(pw > 0, pw * log_p, torch.zeros_like(log_p)).sum(1)
        lm = torch.logsumexp(lw + log_q + log_p, 1)
        for name, val in (("elp", elp), ("lm", lm)):
            g_mu, g_var = torch.autograd.grad(val.sum(), [m_t, v_t], retain_graph=True)
            out[name].append(val.detach().numpy())
            out[f"{name}_dmu"].append(g_mu.numpy())
            out[f"{name}_dvar"].append(g_var.numpy())
        tilt = torch.softmax((lw + log_q + log_p).detach(), 1)
        for n, p in params:  # central differences of log p on the grid in the raw parameter (h = 1e-6)
            with torch.no_grad():
                lps = []
                for sign in (1, -1):
                    p.add_(sign * 1e-6)
                    lps.append(likelihood.forward(ft).log_prob(torch.as_tensor(yy)[:, None].expand_as(ft)))
                    p.sub_(sign * 1e-6)
                dlp = (lps[0] - lps[1]) / 2e-6
                out[f"elp_d{n}"].append(torch.where(pw > 0, pw.detach() * dlp, torch.zeros_like(dlp)).sum(1).numpy())
                out[f"lm_d{n}"].append((tilt * dlp).sum(1).numpy())
    return {k: np.concatenate(v) for k, v in out.items()}
