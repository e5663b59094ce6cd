"""The Cholesky prelude of the inducing-point computations: L = chol(Kuu + jitter I).

Shared by the collapsed bound (models/collapsed.py, Reeb et al. 2018 App. D), the PAC-GP free-form q(u)
(models/pac_gp.py) and the square-loss DLM's closed form (objectives/sq_dlm.py, Wei et al. 2021 sec. 2). It lives in
util/ because models/ imports objectives/, so neither package can hold it for both without a package cycle.
"""

from __future__ import annotations

import torch


def jittered_cholesky(K: torch.Tensor, jitter=0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(L, I) with L L^T = K + jitter I; the identity (K's size, dtype and device) is returned because every caller
    needs it again (I + A D^-1 A^T). No retry: a failing Cholesky raises torch.linalg.LinAlgError, the callers'
    jitter being the documented one (models/collapsed.default_jitter)."""
    eye = torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
    return torch.linalg.cholesky(K + jitter * eye), eye
