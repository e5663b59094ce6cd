"""util.linalg.jittered_cholesky against numpy: the factor of K + jitter I, and the identity it hands back."""

import numpy as np
import pytest
import torch

from dlm_bench.util.linalg import jittered_cholesky


@pytest.mark.parametrize("jitter", [0.0, 1e-3])
def test_jittered_cholesky_is_numpys_factor_of_k_plus_jitter(jitter):
    rng = np.random.default_rng(0)
    B = rng.normal(size=(6, 6))
    K = B @ B.T + 0.1 * np.eye(6)
    L, eye = jittered_cholesky(torch.as_tensor(K), jitter)
    np.testing.assert_allclose(L.numpy(), np.linalg.cholesky(K + jitter * np.eye(6)), rtol=1e-12, atol=1e-14)
    assert np.array_equal(eye.numpy(), np.eye(6)) and eye.dtype == torch.float64


def test_jittered_cholesky_raises_on_an_indefinite_matrix():
    with pytest.raises(torch.linalg.LinAlgError):
        jittered_cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.float64))
