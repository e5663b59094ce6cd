"""uPS (estimators/ups.py): the rejection sampler draws from q~(f) ∝ N(f|mu,sigma^2) p(y|f)
(Kolmogorov-Smirnov against the CDF of q~ computed by quadrature on a dense grid), its envelope is
valid, its gradient is unbiased; bMC's gradient bias shrinks with L; smooth-bMC's formula."""

import math
import zlib

import numpy as np
import pytest
import torch
from scipy import stats

from dlm_bench.estimators.bmc import sampled_log_likelihoods
from dlm_bench.estimators.quadrature import log_lik_fn
from dlm_bench.estimators.ups import proposal_width, ups_log_marginal, ups_sample
from dlm_bench.likelihoods import LIKELIHOODS
from tests import reference as ref

T = lambda *v: torch.tensor(v, dtype=torch.float64)  # noqa: E731

# (kind, y, mu, var): aligned, and badly misaligned (acceptance rate down to ~1e-3)
KS_CASES = [
    ("probit", 1, 0.5, 1.0), ("probit", 1, -3.0, 1.0), ("probit", 0, 2.5, 0.3),
    ("logistic", 1, 0.0, 4.0), ("logistic", 0, 4.0, 1.0),
    ("poisson_exp", 3, 1.0, 0.5), ("poisson_exp", 0, 2.0, 1.0), ("poisson_exp", 8, 0.0, 0.3),
    ("poisson_exp", 25, 3.2, 0.01), ("poisson_softplus", 6, -1.0, 1.0),
    ("student_t", 0.5, 0.0, 1.0), ("student_t", 4.0, 0.0, 0.2),  # scale^2 = 0.5, 4 degrees of freedom
]


@pytest.mark.parametrize("kind,y,mu,var", KS_CASES)
def test_ups_samples_follow_the_tilted_distribution(kind, y, mu, var):
    torch.manual_seed(zlib.crc32(f"{kind}{y}{mu}".encode()))
    lik = LIKELIHOODS[kind]().double()
    if kind == "student_t":
        lik.noise = 0.5
    samples, stats_ = ups_sample(lik, T(y), T(mu), T(var), 3000)
    assert samples.shape == (3000, 1) and torch.isfinite(samples).all()
    p = stats.kstest(samples[:, 0].numpy(), ref.tilted_cdf_ref(kind, y, mu, var)).pvalue
    assert p > 1e-3, (kind, y, mu, var, p)
    # mean proposals per sample: E = l_max / E_q[p(y|f)] for any valid proposal width
    expected = math.exp(lik.log_max(T(y)).item() - ref.log_marginal_ref(kind, y, mu, var))
    assert stats_.proposals_per_sample == pytest.approx(expected, rel=0.15)


def test_ups_vectorised_over_examples_with_fallback():
    torch.manual_seed(3)
    lik = LIKELIHOODS["poisson_exp"]().double()
    y, mu, var = T(0, 4, 9, 1), T(0.5, 0.0, 2.0, -2.0), T(1.0, 0.4, 0.2, 2.0)
    samples, st = ups_sample(lik, y, mu, var, 2000)
    assert st.fallback > 0  # the misaligned examples needed the per-example stage
    for i in range(4):
        cdf = ref.tilted_cdf_ref("poisson_exp", y[i].item(), mu[i].item(), var[i].item())
        assert stats.kstest(samples[:, i].numpy(), cdf).pvalue > 1e-3


def log_accept(likelihood, y, f, mu, var, n, log_max):
    """log [q(f) p(y|f) / (l_max h2(f))] with q = N(mu, var) and the proposal h2 = N(mu, n var): <= 0 wherever the
    envelope l_max h2 covers q p (written out here from the densities, apart from ups_sample's algebra)."""
    log_2pi = math.log(2 * math.pi)
    log_q = -0.5 * (log_2pi + torch.log(var) + (f - mu) ** 2 / var)
    log_h2 = -0.5 * (log_2pi + torch.log(n * var) + (f - mu) ** 2 / (n * var))
    return log_lik_fn(likelihood)(y, f) + log_q - log_max - log_h2


def test_envelope_is_valid_including_the_poisson_mode_inside_the_interval():
    """q p <= l_max h2 on a dense grid for random (mu, sigma, y). With the upstream interval test (never
    true) the mode log y inside [a, b] is ignored, n comes out too large and the envelope fails."""
    rng = np.random.default_rng(0)
    lik = LIKELIHOODS["poisson_exp"]().double()
    y = T(*rng.integers(1, 30, 400).astype(float))
    mu = torch.log(y) + T(*rng.normal(0, 0.4, 400))  # log y often within [a, b]
    var = T(*rng.uniform(0.005, 0.5, 400))
    n = proposal_width(lik, y, mu, var.sqrt())
    grid = mu + var.sqrt() * torch.linspace(-4, 4, 801, dtype=torch.float64).unsqueeze(-1)
    assert (log_accept(lik, y, grid, mu, var, n, lik.log_max(y)) <= 1e-12).all()
    assert (n > 1).any() and (n < 10).any()
    # what the upstream test would do: ignore the mode (take the endpoints only)
    mode_blind = type("ModeBlind", (type(lik),), {"mode": lambda self, yy: torch.full_like(yy, -math.inf)})()
    n_bad = proposal_width(mode_blind, y, mu, var.sqrt())
    assert (log_accept(lik, y, grid, mu, var, n_bad, lik.log_max(y)) > 1e-3).any()


@pytest.mark.parametrize("kind,y,mu,var", [("poisson_exp", 6, 0.5, 0.6), ("probit", 1, -1.5, 2.0)])
def test_ups_gradient_is_unbiased_and_bmc_bias_shrinks_with_L(kind, y, mu, var):
    torch.manual_seed(11)
    lik = LIKELIHOODS[kind]().double()
    g_ref = np.array(ref.tilted_moments_ref(kind, y, mu, var))
    reps = 400
    yy, mm, vv = T(y).repeat(reps), T(mu).repeat(reps), T(var).repeat(reps)  # reps independent copies
    m, v = mm.clone().requires_grad_(), vv.clone().requires_grad_()
    value, _ = ups_log_marginal(lik, yy, m, v, num_samples=5)
    value.sum().backward()
    est = np.stack([m.grad.numpy(), v.grad.numpy()], 1)
    se = est.std(0, ddof=1) / math.sqrt(reps)
    assert np.all(np.abs(est.mean(0) - g_ref) < 4 * se + 1e-9), (est.mean(0), g_ref, se)
    assert value[0].item() == pytest.approx(ref.log_marginal_ref(kind, y, mu, var), rel=1e-6)

    bias = {}
    for L in (1, 10, 100):
        m, v = mm.clone().requires_grad_(), vv.clone().requires_grad_()
        dist = type("D", (), {"mean": m, "variance": v})()
        log_p = sampled_log_likelihoods(lik, dist, yy, L)
        (torch.logsumexp(log_p, 0) - math.log(L)).sum().backward()
        bias[L] = abs(m.grad.mean().item() - g_ref[0])
        se_L = m.grad.std().item() / math.sqrt(reps)
        if L == 1:
            assert bias[L] > 4 * se_L  # bMC with one sample is clearly biased
    assert bias[1] > bias[10] > bias[100]


def test_smooth_bmc_is_log_of_mean_likelihood_plus_nu():
    from dlm_bench.estimators.smooth_bmc import SmoothBMCPredictiveLogLikelihood

    lik = LIKELIHOODS["poisson_exp"]().double()
    mll = SmoothBMCPredictiveLogLikelihood.__new__(SmoothBMCPredictiveLogLikelihood)
    torch.nn.Module.__init__(mll)
    mll.likelihood, mll.num_samples, mll.nu = lik, 4, 0.05
    mu, var, y = T(0.2, 1.0), T(0.5, 0.1), T(2.0, 7.0)
    dist = type("D", (), {"mean": mu, "variance": var})()
    torch.manual_seed(5)
    got = mll._log_likelihood_term(dist, y).item()
    torch.manual_seed(5)
    f = (mu + var.sqrt() * torch.randn(4, 2, dtype=torch.float64)).numpy()
    p = stats.poisson.pmf(y.numpy(), np.exp(f))
    assert got == pytest.approx(np.log(p.mean(0) + 0.05).sum(), rel=1e-10)


def test_ups_likelihood_parameter_gradient_vs_quadrature():
    """Issue 12 item 9: uPS passes d/dphi log E_q[p_phi(y|f)] to the likelihood's parameters (Student-t scale).
    Reference: central finite differences of the dense-grid log marginal (tests/reference.py, scipy).
    The mu/var gradients stay the uPS estimates (unbiased, within 4 standard errors of the tilted moments)."""
    torch.manual_seed(7)
    cases = [(0.5, 0.0, 1.0), (4.0, 0.0, 0.2), (-1.5, 0.8, 0.5)]
    reps = 300
    for y, mu, var in cases:
        lik = LIKELIHOODS["student_t"]().double()
        lik.noise = 0.5
        yy, mm, vv = T(y).repeat(reps), T(mu).repeat(reps), T(var).repeat(reps)
        m, v = mm.clone().requires_grad_(), vv.clone().requires_grad_()
        value, _ = ups_log_marginal(lik, yy, m, v, num_samples=4)
        value.sum().backward()
        assert lik.raw_noise.grad is not None
        g_phi = lik.raw_noise.grad.item() / reps  # d/d raw_noise, per copy
        raw, h = lik.raw_noise.detach().clone(), 1e-5
        ref_val = []
        for sgn in (1, -1):
            s2 = lik.raw_noise_constraint.transform(raw + sgn * h).item()
            ref_val.append(ref.log_marginal_ref("student_t", y, mu, var, scale2=s2))
        g_ref = (ref_val[0] - ref_val[1]) / (2 * h)
        assert g_phi == pytest.approx(g_ref, rel=1e-5, abs=1e-7), (y, mu, var, g_phi, g_ref)
        # mu/var: still uPS (stochastic), unbiased
        est = np.stack([m.grad.numpy(), v.grad.numpy()], 1)
        se = est.std(0, ddof=1) / math.sqrt(reps)
        g_mv = np.array(ref.tilted_moments_ref("student_t", y, mu, var))
        assert np.all(np.abs(est.mean(0) - g_mv) < 4 * se + 1e-9), (est.mean(0), g_mv, se)
        assert se.min() > 0  # really sampled


def test_ups_mll_likelihood_gradient_equals_the_quadrature_mll():
    """Through the model: uPS's Student-t scale gradient is the quadrature estimator's (same value function)."""
    import gpytorch

    from dlm_bench.estimators import QuadraturePredictiveLogLikelihood, UPSPredictiveLogLikelihood

    torch.manual_seed(2)
    X = torch.randn(40, 2, dtype=torch.float64)
    y = torch.sin(X[:, 0]) + 0.3 * torch.randn(40, dtype=torch.float64)
    grads = []
    for cls in (UPSPredictiveLogLikelihood, QuadraturePredictiveLogLikelihood):
        torch.manual_seed(3)
        from dlm_bench.config.schema import Kernel
        from dlm_bench.models.components import make_kernel
        from dlm_bench.models.svgp import SVGP
        model = SVGP(X[:8].clone(), make_kernel(Kernel.rbf, None)).double()
        lik = LIKELIHOODS["student_t"]().double()
        lik.noise = 0.3
        mll = cls(lik, model, num_data=40)
        model.train()
        (-mll(model(X), y)).backward()
        grads.append(lik.raw_noise.grad.item())
        assert isinstance(model, gpytorch.models.ApproximateGP)
    assert grads[0] == pytest.approx(grads[1], rel=1e-10)


@pytest.mark.parametrize("kind,y,mu,var", [KS_CASES[i] for i in (1, 3, 6, 8, 9, 10, 11)])
def test_exact_fallback_samples_follow_the_tilted_distribution(kind, y, mu, var):
    """max_proposals=1: every pair not accepted by its first proposal takes the inverse-CDF fallback; the
    samples (fallback and accepted alike) pass a KS test against the dense-grid CDF of q~ (fixed seed)."""
    torch.manual_seed(zlib.crc32(f"fallback{kind}{y}{mu}".encode()))
    lik = LIKELIHOODS[kind]().double()
    if kind == "student_t":
        lik.noise = 0.5
    samples, st = ups_sample(lik, T(y), T(mu), T(var), 4000, max_proposals=1)
    assert st.inverse_cdf == st.fallback > 0 and torch.isfinite(samples).all()
    p = stats.kstest(samples[:, 0].numpy(), ref.tilted_cdf_ref(kind, y, mu, var)).pvalue
    assert p > 1e-3, (kind, y, mu, var, p)


def test_issue26_stalled_student_t_example_completes_by_the_fallback():
    """The example that stalled training (issue 26): y = 3.06, mu = -0.297, var = 0.234 with the Student-t
    scale at its floor, acceptance E_q[p]/l_max ~ 1e-11. The sampler now stops after K proposals per pair,
    counts the fallbacks, and its samples follow q~ (KS against the dense grid, scale^2 = 1e-4)."""
    import time

    torch.manual_seed(26)
    lik = LIKELIHOODS["student_t"]().double()
    lik.noise = 1e-4
    t0 = time.perf_counter()
    samples, st = ups_sample(lik, T(3.06), T(-0.297), T(0.234), 3000)
    assert time.perf_counter() - t0 < 20
    assert st.inverse_cdf > 0 and torch.isfinite(samples).all()
    p = stats.kstest(samples[:, 0].numpy(), ref.tilted_cdf_ref("student_t", 3.06, -0.297, 0.234, scale2=1e-4)).pvalue
    assert p > 1e-3, p
