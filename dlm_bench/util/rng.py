"""The process's global RNG states (Python's `random`, numpy's, torch's CPU and CUDA ones) taken and put back as one
value: a batched beta group builds each batch from the state the unbatched run has after its data split."""

from __future__ import annotations

import random

import numpy as np
import torch


def get_rng() -> tuple:
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    return random.getstate(), np.random.get_state(), torch.get_rng_state(), cuda


def set_rng(state: tuple) -> None:
    random.setstate(state[0])
    np.random.set_state(state[1])
    torch.set_rng_state(state[2])
    if state[3] is not None:
        torch.cuda.set_rng_state_all(state[3])
