"""The k-means++ seeding behind model.inducing_init=kmeans and savigp.inducing=kmeans (models/components.py): our
O(k N D) version must give exactly what scipy's kmeans2(minit="++") gives, with the same seed, so runs made before
it keep their inducing points."""

import numpy as np
import pytest
import torch
from scipy.cluster.vq import kmeans2

from dlm_bench.config.schema import InducingInit
from dlm_bench.models.components import initial_inducing_points, kmeans_plus_plus


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("n,d,k", [(400, 3, 12), (250, 9, 40), (60, 2, 50)])
def test_inducing_kmeans_equals_scipy_kmeans2_plus_plus(seed, n, d, k):
    g = np.random.default_rng(100 + seed)
    X = np.concatenate([g.normal(size=(n // 2, d)), g.normal(3.0, 0.5, size=(n - n // 2, d))])
    X[:5] = X[5]  # repeated rows: zero distances in the running minimum
    expected, _ = kmeans2(X, k, minit="++", seed=np.random.default_rng(seed))
    got = initial_inducing_points(torch.as_tensor(X), k, InducingInit.kmeans, seed).numpy()
    np.testing.assert_array_equal(got, expected)


def test_seeding_draws_distinct_rows_with_probability_d2():
    """The seeding itself: centres are data rows, none picked twice while unpicked rows have positive distance, and
    the second centre follows D^2 weighting (a large-sample check against the closed form)."""
    X = np.array([[0.0], [1.0], [3.0]])
    picks = np.zeros(3)
    rng = np.random.default_rng(0)
    for _ in range(20000):
        init = kmeans_plus_plus(X, 2, rng)
        if init[0, 0] == 0.0:
            picks[int(np.flatnonzero(X[:, 0] == init[1, 0])[0])] += 1
        assert init[0, 0] != init[1, 0]
    p = picks / picks.sum()  # given the first centre at 0: P(1) = 1 / 10, P(3) = 9 / 10
    np.testing.assert_allclose(p[1:], [0.1, 0.9], atol=0.015)
