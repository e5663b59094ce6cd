"""PAC-Bayesian GP learning (Reeb et al., NeurIPS 2018): kl^{-1} (kl_inverse.py), bounded losses and
their Gibbs risks (losses.py), the bounds B and B_Pin and the hyperparameter grid (bound.py), the KL
terms of eqs. 8 and 10 (kl.py), and the evaluation every method gets under eval.pac=true (evaluation.py)."""

from .bound import BOUNDS, bound_kl, bound_pinsker, complexity, log_theta_size, round_to_grid
from .kl import kl_collapsed, kl_full_gp, kl_sparse
from .kl_inverse import binary_kl, kl_inverse
from .losses import LOSSES, gibbs_risk, pointwise_loss

__all__ = [
    "BOUNDS", "LOSSES", "binary_kl", "bound_kl", "bound_pinsker", "complexity", "gibbs_risk", "kl_collapsed",
    "kl_full_gp", "kl_inverse", "kl_sparse", "log_theta_size", "pointwise_loss", "round_to_grid",
]
