"""Independent numpy re-derivations used as test references (no torch, no gpytorch)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular


def rbf(A: np.ndarray, B: np.ndarray, lengthscale: float, outputscale: float) -> np.ndarray:
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return outputscale * np.exp(-0.5 * d2 / lengthscale**2)


def gauss_kl(m: np.ndarray, S: np.ndarray, K: np.ndarray) -> float:
    """KL(N(m, S) || N(0, K))."""
    Kc = cho_factor(K, lower=True)
    M = len(m)
    trace = np.trace(cho_solve(Kc, S))
    maha = m @ cho_solve(Kc, m)
    logdetK = 2 * np.log(np.diag(Kc[0])).sum()
    logdetS = np.linalg.slogdet(S)[1]
    return 0.5 * (trace + maha - M + logdetK - logdetS)


def svgp_marginals(X, Z, m, S, lengthscale, outputscale, jitter, whiten):
    """Mean and variance of q(f(x)) = int p(f|u) q(u) du for each row of X, and KL(q || prior).

    whiten: q is over v with u = L v, L = chol(Kuu), prior on v is N(0, I).
    """
    Kuu = rbf(Z, Z, lengthscale, outputscale) + jitter * np.eye(len(Z))
    Kxu = rbf(X, Z, lengthscale, outputscale)
    kxx = np.full(len(X), outputscale)
    L = np.linalg.cholesky(Kuu)
    A = solve_triangular(L, Kxu.T, lower=True)  # L^{-1} Kux
    q_diag = (A**2).sum(0)
    if whiten:
        mu = A.T @ m
        var = kxx - q_diag + np.einsum("ji,jk,ki->i", A, S, A)
        kl = gauss_kl(m, S, np.eye(len(m)))
    else:
        W = cho_solve((L, True), Kxu.T)  # Kuu^{-1} Kux
        mu = W.T @ m
        var = kxx - q_diag + np.einsum("ji,jk,ki->i", W, S, W)
        kl = gauss_kl(m, S, Kuu)
    return mu, var, kl


def dlm_log_loss(y, mu, var, noise, kl, beta):
    """Wei et al. (2021) eq. (3), Gaussian likelihood, divided by N:
    -mean_i log N(y_i | mu_i, var_i + noise) + beta * KL / N."""
    v = var + noise
    log_pred = -0.5 * np.log(2 * np.pi * v) - 0.5 * (y - mu) ** 2 / v
    return -log_pred.mean() + beta * kl / len(y)


def titsias_optimal_q(X, y, Z, lengthscale, outputscale, noise, jitter):
    """Titsias (2009) optimal q(u) = N(m, S): Sigma = (Kuu + Kuf Kfu / noise)^{-1},
    m = Kuu Sigma Kuf y / noise, S = Kuu Sigma Kuu."""
    Kuu = rbf(Z, Z, lengthscale, outputscale) + jitter * np.eye(len(Z))
    Kuf = rbf(Z, X, lengthscale, outputscale)
    Sigma = np.linalg.inv(Kuu + Kuf @ Kuf.T / noise)
    m = Kuu @ Sigma @ Kuf @ y / noise
    S = Kuu @ Sigma @ Kuu
    return m, 0.5 * (S + S.T)


def collapsed_sgpr_bound(X, y, Z, lengthscale, outputscale, noise, jitter):
    """Titsias (2009) bound: log N(y | 0, Qff + noise I) - tr(Kff - Qff) / (2 noise)."""
    n = len(y)
    Kuu = rbf(Z, Z, lengthscale, outputscale) + jitter * np.eye(len(Z))
    Kuf = rbf(Z, X, lengthscale, outputscale)
    Qff = Kuf.T @ np.linalg.solve(Kuu, Kuf)
    C = Qff + noise * np.eye(n)
    sign, logdet = np.linalg.slogdet(C)
    log_marg = -0.5 * (n * np.log(2 * np.pi) + logdet + y @ np.linalg.solve(C, y))
    trace = (outputscale * n - np.trace(Qff)) / (2 * noise)
    return log_marg - trace


def power_ep_neg_log_marginal(X, y, Z, lengthscale, outputscale, noise, jitter, alpha):
    """Dense N x N evaluation of the FITC (alpha=1) / VFE (alpha=0) / power-EP objective (Bui et al.
    2017): -log N(y | 0, Qff + alpha diag(Kff - Qff) + noise I) + (1-alpha)/(2 alpha) sum log(1 + alpha
    lambda_i / noise), whose alpha -> 0 limit is sum lambda_i / (2 noise)."""
    n = len(y)
    Kuu = rbf(Z, Z, lengthscale, outputscale) + jitter * np.eye(len(Z))
    Kuf = rbf(Z, X, lengthscale, outputscale)
    Kff = rbf(X, X, lengthscale, outputscale)
    Qff = Kuf.T @ np.linalg.solve(Kuu, Kuf)
    lam = np.diag(Kff - Qff)
    C = Qff + np.diag(alpha * lam) + noise * np.eye(n)
    logdet = np.linalg.slogdet(C)[1]
    nlml = 0.5 * (n * np.log(2 * np.pi) + logdet + y @ np.linalg.solve(C, y))
    if alpha == 0:
        return nlml + lam.sum() / (2 * noise)
    return nlml + (1 - alpha) / (2 * alpha) * np.log1p(alpha * lam / noise).sum()


def fitc_predict(X, y, Xs, Z, lengthscale, outputscale, noise, jitter):
    """Snelson & Ghahramani (2006) latent predictive, dense: with C = Qff + diag(Kff - Qff) + noise I,
    mean = Q*f C^{-1} y, var = k** - Q*f C^{-1} Qf*."""
    Kuu = rbf(Z, Z, lengthscale, outputscale) + jitter * np.eye(len(Z))
    Kuf = rbf(Z, X, lengthscale, outputscale)
    Kus = rbf(Z, Xs, lengthscale, outputscale)
    Qff = Kuf.T @ np.linalg.solve(Kuu, Kuf)
    Qsf = Kus.T @ np.linalg.solve(Kuu, Kuf)
    C = Qff + np.diag(outputscale - np.diag(Qff)) + noise * np.eye(len(y))
    mean = Qsf @ np.linalg.solve(C, y)
    var = outputscale - np.einsum("ij,ji->i", Qsf, np.linalg.solve(C, Qsf.T))
    return mean, var


def sq_dlm_objective(m, X, y, Z, lengthscale, outputscale, jitter, beta):
    """Wei et al. (2021): 1/2 sum_i (K_iu Kuu^{-1} m - y_i)^2 + beta/2 m^T Kuu^{-1} m, and its gradient."""
    Kuu = rbf(Z, Z, lengthscale, outputscale) + jitter * np.eye(len(Z))
    Kfu = rbf(X, Z, lengthscale, outputscale)
    W = np.linalg.solve(Kuu, Kfu.T).T  # Kfu Kuu^{-1}
    Ki_m = np.linalg.solve(Kuu, m)
    r = W @ m - y
    return 0.5 * r @ r + 0.5 * beta * m @ Ki_m, W.T @ r + beta * Ki_m


# --- one-dimensional likelihoods (numpy/scipy only) -------------------------------------------------

def log_lik_np(kind: str, y: float, f: np.ndarray, scale2: float = 0.5, df: float = 4.0) -> np.ndarray:
    """log p(y|f) written independently with scipy.stats / scipy.special."""
    from scipy import special, stats

    if kind == "probit":
        return stats.norm.logcdf((2 * y - 1) * f)
    if kind == "logistic":
        return special.log_expit((2 * y - 1) * f)
    if kind == "poisson_exp":
        return stats.poisson.logpmf(y, np.exp(f))
    if kind == "poisson_softplus":
        return stats.poisson.logpmf(y, np.logaddexp(0.0, f))
    if kind == "student_t":
        return stats.t.logpdf(y, df, loc=f, scale=np.sqrt(scale2))
    raise ValueError(kind)


def tilted_grid(kind: str, y: float, mu: float, var: float, num: int = 100001, **kw):
    """A dense grid over f covering both q(f) = N(mu, var) and the likelihood's peak, with
    log[q(f) p(y|f)] on it (float64)."""
    from scipy import stats

    sd = np.sqrt(var)
    lo, hi = mu - 12 * sd, mu + 12 * sd
    if kind.startswith("poisson") and y > 0:
        peak = np.log(y) if kind == "poisson_exp" else np.log(np.expm1(y))
        lo, hi = min(lo, peak - 3), max(hi, peak + 3)
    if kind == "student_t":
        lo, hi = min(lo, y - 30), max(hi, y + 30)
    f = np.linspace(lo, hi, num)
    return f, stats.norm.logpdf(f, mu, sd) + log_lik_np(kind, y, f, **kw)


def log_marginal_ref(kind: str, y: float, mu: float, var: float, **kw) -> float:
    """log int N(f|mu,var) p(y|f) df by the trapezoid rule on a dense grid, in log space."""
    from scipy.special import logsumexp

    f, logg = tilted_grid(kind, y, mu, var, **kw)
    h = f[1] - f[0]
    w = np.full_like(f, h)
    w[0] = w[-1] = h / 2
    return float(logsumexp(logg, b=w))


def tilted_moments_ref(kind: str, y: float, mu: float, var: float, **kw) -> tuple[float, float]:
    """Exact gradient of log E_q[p(y|f)] w.r.t. (mu, var): E_q~[(f-mu)/var], E_q~[((f-mu)^2/var^2 - 1/var)/2],
    q~ ∝ q p (the identity behind Proposition 1, evaluated by quadrature)."""
    f, logg = tilted_grid(kind, y, mu, var, **kw)
    w = np.exp(logg - logg.max())
    w /= w.sum()
    d = f - mu
    return float((w * d / var).sum()), float((w * 0.5 * (d**2 / var**2 - 1 / var)).sum())


def tilted_cdf_ref(kind: str, y: float, mu: float, var: float, **kw):
    """CDF of q~(f) ∝ N(f|mu,var) p(y|f) as a callable (cumulative trapezoid on the dense grid)."""
    f, logg = tilted_grid(kind, y, mu, var, **kw)
    g = np.exp(logg - logg.max())
    c = np.concatenate([[0.0], np.cumsum(0.5 * (g[1:] + g[:-1]) * np.diff(f))])
    c /= c[-1]
    return lambda x: np.interp(x, f, c)


def expected_log_lik_ref(kind: str, y: float, mu: float, var: float, **kw) -> float:
    """E_N(f|mu,var)[log p(y|f)] on a dense grid."""
    from scipy import stats

    sd = np.sqrt(var)
    f = np.linspace(mu - 14 * sd, mu + 14 * sd, 200001)
    w = stats.norm.pdf(f, mu, sd)
    return float(np.trapezoid(w * log_lik_np(kind, y, f, **kw), f))
