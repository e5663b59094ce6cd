"""The one Cholesky policy of the package: factor K + jitter I; on failure either raise at once (retries = 0, the
default: the caller's jitter is the documented one) or grow the jitter and try again.

Growth (retries > 0): j <- max(growth j, floor s), s = the mean of K's diagonal, tried while j <= cap s. The FP
paper's models use it with 11 retries (their K, K_uu carry a small relative jitter and may be near singular: a
Cholesky that fails at 1e-8 sf2 succeeds at 1e-7 sf2); every other caller uses no retry, so a matrix that is not
positive definite surfaces as torch.linalg.LinAlgError (the Trainer turns it into a failed run). The sequence of
jitters each call site tries is part of its recorded numbers (scripts/six_run_check.sh compares metrics with ==).

Callers: the collapsed bound (models/collapsed.py), the PAC-GP models and KL terms (models/pac_gp.py, models/sgpr.py,
pac/kl.py, gpmath/inverse_terms.py), the square-loss DLM (objectives/sq_dlm.py), the LGM constructors
(gpmath/lgm.py), the SGGPM active set (sggpm/model.py, sggpm/contraction.py) and SAVIGP's K_zz (savigp/model.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

GROW_RETRIES = 11  # with growth 10 from 1e-10 s, the cap 1e-3 s is reached first: up to 9 grown jitters


@dataclass(frozen=True)
class CholeskyPolicy:
    """jitter: added to the diagonal on the first try (absolute); retries: further tries with a grown jitter."""

    jitter: float = 0.0
    retries: int = 0
    growth: float = 10.0
    floor: float = 1e-10  # the smallest grown jitter, relative to the mean diagonal
    cap: float = 1e-3  # the largest, relative to the mean diagonal

    def factor(self, K: torch.Tensor, eye: torch.Tensor | None = None) -> torch.Tensor:
        """Lower L with L L^T = K + j I for the first j of the sequence that factors; LinAlgError when none does."""
        eye = identity_like(K) if eye is None else eye
        if self.retries == 0:  # raises LinAlgError itself, as these callers always did; never reads info (meta device)
            return torch.linalg.cholesky(K + self.jitter * eye)
        n = K.shape[-1]
        scale = float(K.diagonal(dim1=-2, dim2=-1).mean()) if n else 1.0
        j = self.jitter
        for _ in range(self.retries + 1):
            L, info = torch.linalg.cholesky_ex(K + j * eye)
            if not bool((info != 0).any()):
                return L
            j = max(self.growth * j, self.floor * scale)
            if j > self.cap * scale:
                break
        raise torch.linalg.LinAlgError(f"{n} x {n} matrix + {float(self.jitter):g} I is not positive definite (jitter grown "
                                       f"up to {self.cap:g} of the mean diagonal)")


def identity_like(K: torch.Tensor) -> torch.Tensor:
    return torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)


def jittered_cholesky(K: torch.Tensor, jitter=0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(L, I) with L L^T = K + jitter I, no retry; the identity (K's size, dtype and device) is returned because
    most callers need it again (I + A D^-1 A^T, triangular inverses). jitter may be a tensor (a learned noise)."""
    eye = identity_like(K)
    return CholeskyPolicy(jitter).factor(K, eye), eye


def grown_cholesky(K: torch.Tensor, jitter: float = 0.0) -> torch.Tensor:
    """L of K + j I, j starting at `jitter` and grown on failure (the FP paper's models; formerly fp.model.cholesky_jitter)."""
    return CholeskyPolicy(jitter, GROW_RETRIES).factor(K)
