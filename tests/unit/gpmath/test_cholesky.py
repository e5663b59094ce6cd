"""gpmath.cholesky against numpy: the factor of K + jitter I, the identity jittered_cholesky hands back, and the\njitter sequence of the growing policy worked out by hand."""

import numpy as np
import pytest
import torch

from dlm_bench.gpmath.cholesky import CholeskyPolicy, grown_cholesky, jittered_cholesky


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


def test_no_retry_raises_even_where_a_little_jitter_would_do():
    K = torch.diag(torch.tensor([1.0, 1.0, -5e-7], dtype=torch.float64))
    with pytest.raises(torch.linalg.LinAlgError, match="not positive-definite"):
        CholeskyPolicy(1e-9).factor(K)


def test_growing_policy_stops_at_the_first_jitter_of_its_sequence_that_factors():
    """diag(1, 1, -5e-7): mean diagonal s = (2 - 5e-7) / 3. From jitter 0 the sequence is 0, 1e-10 s, 1e-9 s, ...;
    the first above 5e-7 is 1e-6 s (= 6.67e-7), so L_33 = sqrt(1e-6 s - 5e-7)."""
    d = np.array([1.0, 1.0, -5e-7])
    s = d.mean()
    L = grown_cholesky(torch.as_tensor(np.diag(d)))
    j = 1e-6 * s
    np.testing.assert_allclose(L.numpy(), np.linalg.cholesky(np.diag(d) + j * np.eye(3)), rtol=1e-12)


def test_growing_policy_starts_from_the_callers_jitter():
    d = np.array([2.0, 1.0, -5e-7])
    L = grown_cholesky(torch.as_tensor(np.diag(d)), 3e-7)  # 3e-7 fails; next max(3e-6, 1e-10 s) = 3e-6
    np.testing.assert_allclose(float(L[2, 2]) ** 2, 3e-6 - 5e-7, rtol=1e-9)


def test_growing_policy_gives_up_above_its_cap():
    K = torch.diag(torch.tensor([1.0, 1.0, -1e-2], dtype=torch.float64))  # needs 1e-2 > 1e-3 of the mean diagonal
    with pytest.raises(torch.linalg.LinAlgError, match="grown"):
        grown_cholesky(K)


def test_no_retry_needs_no_host_sync():
    """The meta device has no values: a policy without retries must not read Cholesky's info flag (savigp builds its
    model on the data's device; tests/unit/savigp/test_savigp_model.py uses meta as a stand-in for a GPU)."""
    K = torch.empty(4, 4, dtype=torch.float64, device="meta")
    assert jittered_cholesky(K, 1e-3)[0].shape == (4, 4)


def test_no_retry_factors_a_batch():
    rng = np.random.default_rng(1)
    B = rng.normal(size=(3, 5, 5))
    K = B @ B.transpose(0, 2, 1) + 0.1 * np.eye(5)
    L, _ = jittered_cholesky(torch.as_tensor(K), 1e-4)
    np.testing.assert_allclose(L.numpy(), np.linalg.cholesky(K + 1e-4 * np.eye(5)), rtol=1e-12, atol=1e-14)
