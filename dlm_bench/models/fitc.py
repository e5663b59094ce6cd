"""FITC (Snelson & Ghahramani 2006): the collapsed bundle with alpha = 1 (models/collapsed.py)."""

from __future__ import annotations

import torch

from .sgpr import CollapsedBundle, build_collapsed


def build_fitc(cfg, X_train: torch.Tensor, y_train: torch.Tensor) -> CollapsedBundle:
    return build_collapsed(cfg, X_train, y_train, alpha=1.0)
