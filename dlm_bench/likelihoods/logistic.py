"""Logistic (Bernoulli) likelihood p(y=1|f) = sigmoid(f), y in {0, 1}: log p = -softplus(-(2y-1) f).
No closed form for either expectation: both use the adaptive quadrature of likelihoods/quadrature/ (so does
the predictive Bernoulli's probability E_q[sigmoid(f)])."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .base import SMOOTH_BINARY_HERMITE_TIERS, BinaryLikelihood


class LogisticLikelihood(BinaryLikelihood):
    name = "logistic"
    log_concave = True  # -softplus(-s f) is concave
    hermite_tiers = SMOOTH_BINARY_HERMITE_TIERS  # E_q[log p] by Gauss-Hermite up to var = 6 (base.py)

    def log_prob_f(self, y, f):
        return -F.softplus(-(2 * y - 1) * f)

    def log_prob_f_derivs(self, y, f):
        s = 2 * y - 1
        return s * torch.sigmoid(-s * f), -torch.sigmoid(f) * torch.sigmoid(-f)

    def features(self, y):
        return [(torch.zeros_like(y), torch.ones_like(y))]  # the transition of -softplus(-s f) at f = 0

    def logits(self, f):
        return f

    def log_max(self, y):
        return torch.zeros_like(y)

    def mode(self, y):
        return (2 * y - 1) * math.inf
