"""Central finite differences of a scalar loss over module parameters (float64), against autograd."""

from __future__ import annotations

import numpy as np
import torch


def assert_grads_match_finite_differences(loss_fn, params, h=1e-6, rtol=1e-5, atol=1e-7, max_entries=6, seed=0):
    """Checks up to `max_entries` randomly chosen entries of every parameter tensor."""
    for p in params:
        p.grad = None
    loss_fn().backward()
    rng = np.random.default_rng(seed)
    checked = 0
    for p in params:
        grad = p.grad.detach().clone().reshape(-1)
        flat = p.data.view(-1)
        for i in rng.choice(flat.numel(), size=min(max_entries, flat.numel()), replace=False):
            old = flat[i].item()
            with torch.no_grad():
                flat[i] = old + h
                up = loss_fn().item()
                flat[i] = old - h
                down = loss_fn().item()
                flat[i] = old
            fd = (up - down) / (2 * h)
            assert abs(fd - grad[i].item()) <= atol + rtol * abs(fd), (p.shape, int(i), fd, grad[i].item())
            checked += 1
    assert checked > 0
