"""SAVIGP likelihoods against scipy, and the warped-GP predictive density against a numerical change of variables."""

import numpy as np
import pytest
import torch
from scipy import integrate, special, stats

from dlm_bench.errors import ConfigError
from dlm_bench.savigp.likelihoods import LGCP, WARP_PARAMS, Gaussian, LogisticPM, Softmax, WarpedGaussian, build_likelihood

rng = np.random.default_rng(0)


def test_softmax_log_prob_vs_scipy():
    f = rng.normal(size=(4, 6, 3)) * 3
    y = rng.integers(0, 3, size=6)
    got = Softmax(3).log_prob(torch.as_tensor(f), torch.as_tensor(y, dtype=torch.float64)).numpy()
    ref = special.log_softmax(f, axis=-1)[:, np.arange(6), y]
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_logistic_gaussian_lgcp_vs_scipy():
    f = rng.normal(size=(5, 7, 1)) * 4
    ypm = rng.choice([-1.0, 1.0], size=7)
    got = LogisticPM().log_prob(torch.as_tensor(f), torch.as_tensor(ypm)).numpy()
    np.testing.assert_allclose(got, np.log(special.expit(ypm * f[..., 0])), rtol=1e-10)
    lik = Gaussian(0.3)
    yr = rng.normal(size=7)
    got = lik.log_prob(torch.as_tensor(f), torch.as_tensor(yr)).detach().numpy()
    np.testing.assert_allclose(got, stats.norm.logpdf(yr, f[..., 0], np.sqrt(0.3)), rtol=1e-12)
    counts = rng.poisson(3, size=7).astype(float)
    got = LGCP(offset=2.5).log_prob(torch.as_tensor(f / 4), torch.as_tensor(counts)).numpy()
    np.testing.assert_allclose(got, stats.poisson.logpmf(counts, 2.5 * np.exp(f[..., 0] / 4)), rtol=1e-10)


def test_closed_form_expectations_vs_monte_carlo():
    b, v = torch.tensor([[0.3], [-1.0]]), torch.tensor([[0.5], [0.2]])
    y = torch.tensor([1.0, 2.0])
    eps = torch.as_tensor(np.random.default_rng(1).normal(size=(400000, 2, 1)))
    for lik in (Gaussian(0.4), WarpedGaussian("creep", 0.05), LGCP(1.7)):
        with torch.no_grad():
            mc = lik.log_prob(b + v.sqrt() * eps, y).mean(0)
            np.testing.assert_allclose(lik.expected_log_prob(b, v, y), mc, rtol=5e-3)


def warp_np(y, name="creep"):
    la, lb, c = (np.array(p) for p in WARP_PARAMS[name])
    a, bb = np.exp(la), np.exp(lb)
    return y + (a * np.tanh(bb * (y[..., None] + c))).sum(-1)


def test_warped_log_density_vs_scipy():
    lik = WarpedGaussian("creep", 0.05)
    y = rng.uniform(-0.5, 0.5, size=9)
    f = rng.normal(size=(3, 9, 1))
    ty = warp_np(y)
    h = 1e-6
    dt = (warp_np(y + h) - warp_np(y - h)) / (2 * h)  # t'(y) by finite differences
    ref = stats.norm.logpdf(ty, f[..., 0], np.sqrt(0.05)) + np.log(dt)
    got = lik.log_prob(torch.as_tensor(f), torch.as_tensor(y)).detach().numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-7)


@pytest.mark.parametrize("name", ["creep", "abalone"])
def test_warped_nlpd_vs_numerical_change_of_variables(name):
    lik = WarpedGaussian(name, 0.05)
    mu, var = 0.4, 0.3
    s = np.sqrt(var + 0.05)
    b, v = torch.tensor([[mu]]), torch.tensor([[var]])
    for y in (-0.3, 0.0, 0.2):
        got = lik.log_predictive(b, v, torch.tensor([y])).item()
        h = 1e-5  # P(Y in [y - h, y + h]) = P(t(Y) in [t(y - h), t(y + h)]) with t(Y) ~ N(mu, var + sigma^2)
        p = (stats.norm.cdf(warp_np(np.array(y + h), name), mu, s) - stats.norm.cdf(warp_np(np.array(y - h), name), mu, s)) / (2 * h)
        assert got == pytest.approx(np.log(p), abs=1e-4)  # FD of the CDF: ~1e-5 relative error
    # the density integrates to one over y, and the predictive mean E[t^{-1}(z)] matches quadrature
    dens = lambda yy: np.exp(lik.log_predictive(b, v, torch.tensor([yy])).item())  # noqa: E731
    centre = [lik.t_inverse(torch.tensor(mu + k * s)).item() for k in (-3, 0, 3)]  # the density is narrow in y
    lo, hi = centre[0] - 2, centre[-1] + 2
    assert integrate.quad(dens, lo, hi, points=centre, limit=400)[0] == pytest.approx(1.0, abs=1e-6)
    mean = integrate.quad(lambda yy: yy * dens(yy), lo, hi, points=centre, limit=400)[0]
    assert lik.predict_mean(b, v).item() == pytest.approx(mean, abs=1e-8)


@pytest.mark.parametrize("name", ["creep", "abalone"])
@pytest.mark.parametrize("mu,var", [(2.515, 4.15), pytest.param(-1.0, 0.02, marks=pytest.mark.slow), pytest.param(0.3, 25.0, marks=pytest.mark.slow)])  # 2-3 s each
def test_warped_predictive_mean_vs_dense_grid(name, mu, var):
    """E[t^{-1}(z)], z ~ N(mu, var + sigma^2), against Simpson's rule on 400001 points over +-12 sd (abalone's
    warp steps are about 0.2 wide in z: 60-node Gauss-Hermite was off by 1.1e-3 at var = 4.15)."""
    lik = WarpedGaussian(name, 0.01)
    s = np.sqrt(var + 0.01)
    z = np.linspace(mu - 12 * s, mu + 12 * s, 400001)
    inv = lik.t_inverse(torch.tensor(z)).numpy()
    want = integrate.simpson(inv * stats.norm.pdf(z, mu, s), x=z)
    got = lik.predict_mean(torch.tensor([[mu]], dtype=torch.float64), torch.tensor([[var]], dtype=torch.float64)).item()
    assert got == pytest.approx(want, abs=1e-8)


def test_unknown_likelihood_is_config_error():
    with pytest.raises(ConfigError):
        build_likelihood("student")
    with pytest.raises(ConfigError):
        WarpedGaussian("nope")


@pytest.mark.parametrize("shape", [(7, 3), (2, 5, 7, 3), (1, 4, 6, 10)])
def test_softmax_log_prob_vs_scipy(shape):
    """log p(y | f) = log softmax(f)_y over the last axis (the classes), for any leading sample axes; scipy's
    log_softmax is the reference (the likelihood computes it over a transposed view)."""
    g = torch.Generator().manual_seed(sum(shape))
    f = 3 * torch.randn(*shape, dtype=torch.float64, generator=g)
    y = torch.randint(0, shape[-1], shape[-2:-1], generator=g).double()
    ref = np.take_along_axis(special.log_softmax(f.numpy(), axis=-1),
                             np.broadcast_to(y.long().numpy()[:, None], shape[:-1] + (1,)), -1)[..., 0]
    got = Softmax(shape[-1]).log_prob(f, y)
    assert got.shape == shape[:-1]
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-13, atol=1e-13)


def test_gaussian_and_warped_on_the_layer_equal_their_former_inline_formulas():
    """Issue 56: Gaussian and WarpedGaussian take their density and closed forms from likelihoods/gaussian.py; the
    values and the log sigma^2 gradients are bit for bit those of the formulas written here before (so recorded
    SAVIGP runs do not move), and the density is scipy's."""
    LOG_2PI = np.log(2 * np.pi)
    f = torch.as_tensor(rng.normal(size=(3, 8, 1)))
    b, var = torch.as_tensor(rng.normal(size=(8, 1))), torch.as_tensor(rng.uniform(0.1, 2.0, size=(8, 1)))
    y = torch.as_tensor(rng.uniform(-0.5, 0.5, size=8))
    g = Gaussian(0.3)
    old = -0.5 * (LOG_2PI + g.log_sigma2 + (y - f[..., 0]) ** 2 / g.sigma2)
    new = g.log_prob(f, y)
    assert torch.equal(new, old)
    assert torch.equal(*(torch.autograd.grad(t.sum(), g.log_sigma2)[0] for t in (new, old)))
    np.testing.assert_allclose(new.detach().numpy(), stats.norm.logpdf(y.numpy(), f[..., 0].numpy(), np.sqrt(0.3)),
                               rtol=1e-13)
    w = WarpedGaussian("abalone", 0.05)
    olds = (w.log_dt(y) - 0.5 * (LOG_2PI + w.log_sigma2 + (w.t(y) - f[..., 0]) ** 2 / w.sigma2),
            w.log_dt(y) - 0.5 * (LOG_2PI + w.log_sigma2 + ((w.t(y) - b[..., 0]) ** 2 + var[..., 0]) / w.sigma2),
            w.log_dt(y) - 0.5 * (LOG_2PI + (var[..., 0] + w.sigma2).log()
                                 + (w.t(y) - b[..., 0]) ** 2 / (var[..., 0] + w.sigma2)))
    news = (w.log_prob(f, y), w.expected_log_prob(b, var, y), w.log_predictive(b, var, y))
    for new, old in zip(news, olds):
        assert torch.equal(new, old)
        assert torch.equal(*(torch.autograd.grad(t.sum(), w.log_sigma2)[0] for t in (new, old)))
