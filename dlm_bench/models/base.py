"""What the runner needs from a model, whatever its objective: a loss to minimise on a (mini)batch,
the parameters to train, and the predictive marginals of f at new inputs."""

from __future__ import annotations

import abc

import gpytorch
import torch


class ModelBundle(torch.nn.Module, abc.ABC):
    """A model together with its likelihood and training objective (`module.to()` moves all of it)."""

    likelihood_name = "gaussian"
    num_inducing: int | None = None

    @abc.abstractmethod
    def loss(self, X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The training loss on a batch (a scalar to minimise)."""

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]

    @abc.abstractmethod
    def predict_f(self, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Marginal mean and variance of q(f(x)) at each row of X; var is None for a method that defines
        no predictive variance (square-loss DLM), which then gets no NLL."""

    @property
    def noise(self) -> torch.Tensor | None:
        """The Gaussian noise variance (Student-t: squared scale); None for a bundle or likelihood without one."""
        noise = getattr(getattr(self, "likelihood", None), "noise", None)
        return None if noise is None else noise.reshape(-1)[0]

    def adopt_hyperparameters(self, pretrained) -> None:
        """Fixed-hyperparameter runs: take the kernel, noise and Z of a trained SVGP bundle and freeze them."""
        raise TypeError(f"{type(self).__name__} has no fixed-hyperparameter variant")


@torch.no_grad()
def predict_f(model, X: torch.Tensor, batch_size: int = 4096) -> tuple[torch.Tensor, torch.Tensor]:
    """Marginal mean and variance of q(f(x)) of a GPyTorch model at each row of X (batched to bound memory)."""
    model.eval()
    means, variances = [], []
    with gpytorch.settings.skip_posterior_variances(False):
        for xb in X.split(batch_size):
            f = model(xb)
            means.append(f.mean)
            variances.append(f.variance)
    return torch.cat(means), torch.cat(variances)
