"""SVGP (Hensman et al. 2015): GPyTorch ApproximateGP with a full-covariance (Cholesky) q(u)."""

from __future__ import annotations

import gpytorch
import numpy as np
import torch
from scipy.cluster.vq import kmeans2

from ..config import InducingInit, Kernel, MeanFunction
from ..evaluation import predict_f
from ..estimators import effective_estimator, mll_class
from ..likelihoods import LIKELIHOODS
from .base import ModelBundle


def initial_inducing_points(X: torch.Tensor, num_inducing: int, how: InducingInit, seed: int) -> torch.Tensor:
    n = X.shape[0]
    m = min(num_inducing, n)
    rng = np.random.default_rng(seed)
    if how is InducingInit.random:
        return X[torch.as_tensor(rng.choice(n, size=m, replace=False), device=X.device)].clone()
    if how is InducingInit.kmeans:
        centres, _ = kmeans2(X.detach().cpu().double().numpy(), m, minit="++", seed=rng)
        return torch.as_tensor(centres, dtype=X.dtype, device=X.device)
    raise ValueError(f"unknown inducing_init {how}")


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


class SVGP(gpytorch.models.ApproximateGP):
    def __init__(
        self,
        inducing_points: torch.Tensor,
        kernel: gpytorch.kernels.Kernel,
        mean: MeanFunction = MeanFunction.zero,
        learn_inducing: bool = True,
        whiten: bool = True,
    ):
        q_u = gpytorch.variational.CholeskyVariationalDistribution(inducing_points.size(0))
        strategy_cls = (
            gpytorch.variational.VariationalStrategy if whiten else gpytorch.variational.UnwhitenedVariationalStrategy
        )
        strategy = strategy_cls(self, inducing_points, q_u, learn_inducing_locations=learn_inducing)
        super().__init__(strategy)
        self.mean_module = (
            gpytorch.means.ConstantMean() if mean is MeanFunction.constant else gpytorch.means.ZeroMean()
        )
        self.covar_module = kernel

    def forward(self, x: torch.Tensor) -> gpytorch.distributions.MultivariateNormal:
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


class SVGPBundle(ModelBundle):
    """SVGP + Gaussian likelihood + a GPyTorch approximate MLL (ELBO or log-loss DLM)."""

    def __init__(self, model: SVGP, likelihood, mll_cls, num_data: int, beta: float, likelihood_name="gaussian",
                 **mll_kwargs):
        super().__init__()
        self.likelihood_name = likelihood_name
        self.model, self.likelihood = model, likelihood
        self.mll = mll_cls(likelihood, model, num_data=num_data, beta=beta, **mll_kwargs)
        self.num_inducing = int(model.variational_strategy.inducing_points.shape[-2])

    def loss(self, X, y):
        return -self.mll(self.model(X), y)

    def predict_f(self, X):
        return predict_f(self.model, X)

    @property
    def noise(self):
        """The Gaussian noise variance (Student-t: squared scale); None for likelihoods without one."""
        noise = getattr(self.likelihood, "noise", None)
        return None if noise is None else noise.reshape(-1)[0]

    def adopt_hyperparameters(self, pretrained: "SVGPBundle") -> None:
        """Fixed DLM: copy the kernel, mean, noise and Z of a trained SVGP, freeze them, and start q(u)
        afresh (GPyTorch re-initialises it to the prior on the next training-mode call)."""
        fresh_q = {k: v for k, v in self.model.state_dict().items() if _is_variational(k)}
        state = {k: v for k, v in pretrained.model.state_dict().items() if not _is_variational(k)}
        self.model.load_state_dict({**state, **fresh_q})
        self.model.variational_strategy.variational_params_initialized.fill_(0)
        self.likelihood.load_state_dict(pretrained.likelihood.state_dict())
        for name, p in self.named_parameters():
            p.requires_grad_(_is_variational(name))


def _is_variational(name: str) -> bool:
    """Parameters / buffers of q(u) (everything else is a hyperparameter or Z)."""
    return "_variational_distribution" in name or "variational_params_initialized" in name


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


def build_svgp(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> SVGPBundle:
    model_cfg = cfg.model
    kernel, Z = initial_kernel_and_inducing(cfg, X_train)
    model = SVGP(Z, kernel, model_cfg.mean, model_cfg.learn_inducing, model_cfg.whiten)
    likelihood = build_likelihood(model_cfg)
    estimator = effective_estimator(cfg.objective.name, cfg.estimator.name, model_cfg.get("likelihood"))
    mll_kwargs = {}
    if estimator in ("bmc", "smooth_bmc", "ups"):
        mll_kwargs["num_samples"] = cfg.estimator.num_samples
    if estimator == "smooth_bmc":
        mll_kwargs["nu"] = cfg.estimator.get("nu")
    mll_cls = mll_class(cfg.objective.name, estimator)
    return SVGPBundle(model, likelihood, mll_cls, X_train.shape[0], cfg.objective.beta,
                      likelihood_name=model_cfg.get("likelihood") or "gaussian", **mll_kwargs)


def build_likelihood(model_cfg):
    """`model.likelihood` -> likelihood module; gaussian and student_t start at `noise_init`."""
    likelihood = LIKELIHOODS[model_cfg.get("likelihood") or "gaussian"]()
    if hasattr(likelihood, "noise"):
        likelihood.noise = model_cfg.noise_init
    return likelihood
