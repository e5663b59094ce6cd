"""What every model is built from: kernel, inducing inputs Z and likelihood, from the `model` config group.
Shared by SVGP, the collapsed models, sq-DLM, the exact GP and the PAC-GPs (and new papers' models), so sibling
models need not import each other."""

from __future__ import annotations

import gpytorch
import numpy as np
import torch
from scipy.cluster.vq import kmeans2
from scipy.spatial.distance import cdist

from ..config.schema import GPYTORCH_NOISE_FLOOR, InducingInit, Kernel
from ..likelihoods import LIKELIHOODS, GaussianLikelihood


def initial_inducing_points(X: torch.Tensor, num_inducing: int, how: InducingInit, seed: int) -> torch.Tensor:
    n = X.shape[0]
    m = min(num_inducing, n)
    rng = np.random.default_rng(seed)
    if how is InducingInit.random:
        return X[torch.as_tensor(rng.choice(n, size=m, replace=False), device=X.device)].clone()
    if how is InducingInit.kmeans:
        data = X.detach().cpu().double().numpy()
        centres, _ = kmeans2(data, kmeans_plus_plus(data, m, rng), minit="matrix")
        return torch.as_tensor(centres, dtype=X.dtype, device=X.device)
    raise ValueError(f"unknown inducing_init {how}")


def kmeans_plus_plus(data: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (Arthur & Vassilvitskii 2007) that gives scipy's kmeans2(minit="++") centres exactly: the
    same draws from `rng` and the same distances, kept as a running minimum.

    Why not scipy's: its _kpp recomputes the distances to every chosen centre at each step, O(k^2 N D); on MNIST
    (N = 60000, D = 784, k = 200) that took about 10 minutes before training started. This is O(k N D)."""
    n = data.shape[0]
    init = np.empty((k, data.shape[1]))
    idx = int(rng.integers(n))
    d2 = None
    for i in range(k):
        if i:
            cum = (d2 / d2.sum()).cumsum()
            idx = int(np.searchsorted(cum, rng.uniform()))
        init[i] = data[idx]
        new = cdist(init[i:i + 1], data, metric="sqeuclidean")[0]
        d2 = new if d2 is None else np.minimum(d2, new)
    return init


def make_kernel(kind: Kernel, ard_dims: int | None, matern_nu: float = 2.5) -> gpytorch.kernels.Kernel:
    if kind is Kernel.rbf:
        base = gpytorch.kernels.RBFKernel(ard_num_dims=ard_dims)
    elif kind is Kernel.matern:
        if matern_nu not in (0.5, 1.5, 2.5):
            raise ValueError(f"model.matern_nu must be 0.5, 1.5 or 2.5, got {matern_nu}")
        base = gpytorch.kernels.MaternKernel(nu=matern_nu, ard_num_dims=ard_dims)
    else:
        raise ValueError(f"unknown kernel {kind}")
    return gpytorch.kernels.ScaleKernel(base)


def initial_kernel(cfg, X_train: torch.Tensor):
    """The kernel every model starts from: model.kernel, ard, initial lengthscale / outputscale."""
    model_cfg = cfg.model
    kernel = make_kernel(model_cfg.kernel, X_train.shape[1] if model_cfg.ard else None, model_cfg.matern_nu)
    kernel.base_kernel.lengthscale = model_cfg.lengthscale_init
    kernel.outputscale = model_cfg.outputscale_init
    return kernel


def initial_kernel_and_inducing(cfg, X_train: torch.Tensor):
    """The initial kernel and inducing inputs Z every sparse model starts from."""
    model_cfg = cfg.model
    Z = initial_inducing_points(X_train, model_cfg.num_inducing, model_cfg.inducing_init, cfg.seed)
    return initial_kernel(cfg, X_train), Z


def gaussian_likelihood(model_cfg) -> GaussianLikelihood:
    """The Gaussian likelihood of every regression model: noise variance >= `model.noise_floor`, starting at
    `model.noise_init`."""
    floor = model_cfg.get("noise_floor", GPYTORCH_NOISE_FLOOR)
    likelihood = GaussianLikelihood(noise_constraint=gpytorch.constraints.GreaterThan(floor))
    likelihood.noise = model_cfg.noise_init
    return likelihood


def build_likelihood(model_cfg):
    """`model.likelihood` -> likelihood module; gaussian and student_t start at `noise_init`."""
    name = model_cfg.get("likelihood") or "gaussian"
    if name == "gaussian":
        return gaussian_likelihood(model_cfg)
    likelihood = LIKELIHOODS[name]()
    if hasattr(likelihood, "noise"):
        likelihood.noise = model_cfg.noise_init
    return likelihood
