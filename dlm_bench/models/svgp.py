"""SVGP (Hensman et al. 2015): GPyTorch ApproximateGP with a full-covariance (Cholesky) q(u)."""

from __future__ import annotations

import gpytorch
import torch

from ..config import MeanFunction
from ..estimators import effective_estimator, mll_class, mll_kwargs
from .base import ModelBundle, predict_f
from .components import build_likelihood, initial_kernel_and_inducing


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


def build_svgp(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> SVGPBundle:
    model_cfg = cfg.model
    kernel, Z = initial_kernel_and_inducing(cfg, X_train)
    model = SVGP(Z, kernel, model_cfg.mean, model_cfg.learn_inducing, model_cfg.whiten)
    likelihood = build_likelihood(model_cfg)
    estimator = effective_estimator(cfg.objective.name, cfg.estimator.name, model_cfg.get("likelihood"))
    mll_cls = mll_class(cfg.objective.name, estimator)
    return SVGPBundle(model, likelihood, mll_cls, X_train.shape[0], cfg.objective.beta,
                      likelihood_name=model_cfg.get("likelihood") or "gaussian",
                      **mll_kwargs(cfg.estimator, estimator))
