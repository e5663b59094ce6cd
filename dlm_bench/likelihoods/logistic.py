"""Logistic (Bernoulli) likelihood p(y=1|f) = sigmoid(f), y in {0, 1}: log p = -softplus(-(2y-1) f).
No closed form for either expectation: both use log-space Gauss-Hermite quadrature (so does the predictive
Bernoulli's probability E_q[sigmoid(f)])."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .base import BinaryLikelihood


class LogisticLikelihood(BinaryLikelihood):
    name = "logistic"

    def log_prob_f(self, y, f):
        return -F.softplus(-(2 * y - 1) * f)

    def logits(self, f):
        return f

    def log_max(self, y):
        return torch.zeros_like(y)

    def mode(self, y):
        return (2 * y - 1) * math.inf
