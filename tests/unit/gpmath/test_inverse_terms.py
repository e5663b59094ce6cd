"""gpmath.inverse_terms against numpy (values) and against torch.autograd.gradcheck and autograd through the plain
Cholesky path (gradients), for a loss that uses all three outputs."""

import numpy as np
import pytest
import torch

from dlm_bench.gpmath.inverse_terms import inverse_terms


def _spd(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    return torch.as_tensor(A @ A.T / n + 0.3 * np.eye(n)), torch.as_tensor(rng.normal(size=n))


def _plain(C, y):
    L = torch.linalg.cholesky(C)
    eye = torch.eye(C.shape[-1], dtype=C.dtype)
    return (2 * L.diagonal().log().sum(), torch.linalg.solve_triangular(L, eye, upper=False).square().sum(0),
            torch.cholesky_solve(y.unsqueeze(-1), L).squeeze(-1))


def test_values_match_numpy():
    C, y = _spd(9, 0)
    logdet, d, a = inverse_terms(C, y)
    Ci = np.linalg.inv(C.numpy())
    assert logdet.item() == pytest.approx(np.linalg.slogdet(C.numpy())[1], rel=1e-12)
    assert np.allclose(d.numpy(), np.diag(Ci), rtol=1e-10) and np.allclose(a.numpy(), Ci @ y.numpy(), rtol=1e-10)


def _loss(fn, C, y, w):
    logdet, d, a = fn(C, y)
    return 0.7 * logdet + (w * d).sum() + (a * a.flip(0)).sum() + a @ y


def test_gradients_match_gradcheck_and_the_plain_path():
    C0, y0 = _spd(8, 1)
    w = torch.linspace(-1.0, 2.0, 8, dtype=torch.float64)
    sym = lambda B: 0.5 * (B + B.T)  # noqa: E731 - gradcheck perturbs entries one at a time: keep C symmetric
    assert torch.autograd.gradcheck(lambda B, y: _loss(inverse_terms, sym(B), y, w), (C0.clone().requires_grad_(),
                                                                                      y0.clone().requires_grad_()))
    grads = []
    for fn in (inverse_terms, _plain):
        C, y = C0.clone().requires_grad_(), y0.clone().requires_grad_()
        _loss(fn, sym(C), y, w).backward()
        grads.append((C.grad, y.grad))
    assert torch.allclose(grads[0][0], grads[1][0], rtol=1e-9, atol=1e-12)
    assert torch.allclose(grads[0][1], grads[1][1], rtol=1e-9, atol=1e-12)
