"""SAVIGP (Dezfouli & Bonilla, NIPS 2015): Q latent GPs, sparse mixture-of-Gaussians posterior, black-box ELBO.

Notation as in the paper / supplement (spec 3.1): kernels kappa_j with latent white noise w on K(X, X) and K(Z_j, Z_j),
inducing inputs Z_j (M x D), q(u) = sum_k pi_k prod_j N(u_j; m_kj, S_kj), A_j = K_xz_j K_zz_j^{-1},
b_kj(n) = [A_j m_kj]_n, Sigma_kj(n) = Ktilde_j(n) + [A_j S_kj A_j^T]_nn, Ktilde_j = diag K_xx_j - diag(A_j K_zx_j).

ELBO = L_ent + L_cross + L_ell. The likelihood term's *value* is the Monte Carlo estimate (or the closed form for
`exact`); the gradient estimator is chosen by building a surrogate scalar with that value whose autograd
gradient is the estimator (score: supplement eqs. 12-14 via the marginal parameters b, Sigma; score_cv: eqs. 23-29;
reparam; exact). Hyperparameter gradients (eqs. 15-22) follow from the same surrogate through A_j(theta) and
Ktilde_j(theta); likelihood-parameter gradients are E[d log p / d phi] at the (detached) samples.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..errors import ConfigError
from ..gpmath.cholesky import CholeskyPolicy
from ..gpmath.kernels import se_scaled
from .likelihoods import SavigpLikelihood

LOG_2PI = math.log(2 * math.pi)
LOG_UPPER = math.log(1e10)  # upstream: hyperparameters in log space, bounded above by log 1e10
ESTIMATORS = ("score_cv", "score", "reparam", "exact")
POSTERIORS = ("fg", "mog")
# L_ell over blocks of points: the score-function terms make some twenty elementwise passes over (K, S, N, Q) sample
# arrays (docs/performance.md), which at USPS size (S = 2000, N = 1233, Q = 3: 59 MB each) stream from memory. Blocks of
# about this many elements stay in cache. Measured (one thread, 2-core machine, value + gradient of savigp_fig3 FG at
# SF 0.1): 552 ms all at once, 395 / 378 / 407 / 462 ms in blocks of 64 / 128 / 256 / 512 points (384k-3.1M elements);
# Boston (S = 2000, N = 300, Q = 1): 47.5 ms at once, 44.8 ms in blocks of 128, 49.6 in blocks of 64 (the rule: 262).
SAMPLE_BLOCK_ELEMENTS = 2 ** 19
MIN_POINTS_PER_BLOCK = 64
# On a GPU there is no cache to fit: each block is one round of some forty kernel launches (value and gradient), so
# small blocks make the evaluation launch-bound (MNIST, S = 2000, N = 60000: 229 blocks of 262 points). Blocks there only
# bound memory: 2^27 elements is 1 GiB per float64 sample array (MNIST in one block; a dozen such arrays live at once).
SAMPLE_BLOCK_ELEMENTS_GPU = 2 ** 27


class SEKernel(nn.Module):
    """Squared exponential sigma_f^2 exp(-|x - x'|^2_ell / 2) with log-space hyperparameters (ARD or isotropic)."""

    def __init__(self, dim: int, ard: bool, lengthscale: float = 1.0, variance: float = 1.0):
        super().__init__()
        n = dim if ard else 1
        self.log_lengthscale = nn.Parameter(torch.full((n,), math.log(lengthscale), dtype=torch.float64))
        self.log_variance = nn.Parameter(torch.tensor(math.log(variance), dtype=torch.float64))

    def forward(self, X1, X2):
        ell = self.log_lengthscale.clamp(max=LOG_UPPER).exp()
        return se_scaled(X1, X2, ell, self.log_variance.clamp(max=LOG_UPPER).exp())

    def diag(self, X):
        return self.log_variance.clamp(max=LOG_UPPER).exp().expand(X.shape[0])


class Savigp(nn.Module):
    def __init__(self, Z: list[torch.Tensor], likelihood: SavigpLikelihood, *, posterior: str = "fg",
                 components: int = 1, ard: bool = False, lengthscale: float = 1.0, variance: float = 1.0,
                 latent_noise: float = 1e-3, entropy: str = "bound", estimator: str = "reparam",
                 cv_samples: int | None = None, cv_holdout: bool = False, seed: int = 0):
        super().__init__()
        Q = likelihood.num_latent
        if len(Z) != Q:
            raise ConfigError(f"the likelihood has {Q} latent processes but {len(Z)} sets of inducing inputs were given")
        if posterior not in POSTERIORS:
            raise ConfigError(f"savigp.posterior must be one of {', '.join(POSTERIORS)}, got {posterior!r}")
        if posterior == "fg" and components != 1:
            raise ConfigError(f"savigp.posterior=fg is one full Gaussian: use savigp.components=1 (got {components})")
        if components < 1:
            raise ConfigError(f"savigp.components must be >= 1, got {components}")
        if entropy not in ("bound", "exact") or (entropy == "exact" and posterior != "fg"):
            raise ConfigError(f"savigp.entropy must be bound, or exact with posterior=fg (got {entropy}, posterior={posterior})")
        if estimator not in ESTIMATORS:
            raise ConfigError(f"unknown savigp.estimator {estimator!r}; valid choices: {', '.join(ESTIMATORS)}")
        if estimator == "exact" and not getattr(likelihood, "has_exact", False):
            raise ConfigError(f"savigp.estimator=exact needs a closed-form E[log p] (gaussian, warp, lgcp), "
                              f"not likelihood {type(likelihood).__name__}")
        self.Q, self.K, self.M = Q, components, Z[0].shape[0]
        self.posterior, self.entropy_kind, self.estimator, self.cv_samples = posterior, entropy, estimator, cv_samples
        self.latent_noise = latent_noise
        self.cv_holdout = cv_holdout
        # Z needs a gradient only in the "inducing" block (block_optimizer.grads_for switches it on there alone)
        self.Z = nn.ParameterList([nn.Parameter(z.clone(), requires_grad=False) for z in Z])
        dim = Z[0].shape[1]
        self.kernels = nn.ModuleList(SEKernel(dim, ard, lengthscale, variance) for _ in range(Q))
        self.likelihood = likelihood
        g = torch.Generator().manual_seed(seed)
        self.m = nn.Parameter(torch.zeros(components, Q, self.M, dtype=torch.float64))
        if posterior == "fg":
            self.L_offdiag = nn.Parameter(torch.zeros(Q, self.M, self.M, dtype=torch.float64))
            self.L_logdiag = nn.Parameter(torch.zeros(Q, self.M, dtype=torch.float64))
        else:  # upstream init: s = 0.5, pi = softmax of U(1, 5) draws
            self.log_s = nn.Parameter(torch.full((components, Q, self.M), math.log(0.5), dtype=torch.float64))
        self.pi_logits = nn.Parameter(1 + 4 * torch.rand(components, generator=g, dtype=torch.float64))
        self.to(Z[0].device)  # a model lives where its Z does: init_posterior mixes Z with the kernel parameters

    # ------------------------------------------------------------------ parameters
    @property
    def pi(self):
        return torch.softmax(self.pi_logits, 0)

    def chol_S(self):
        """FG: S_j = L_j L_j^T with L_j lower triangular, log-parameterised diagonal."""
        return torch.tril(self.L_offdiag, -1) + torch.diag_embed(self.L_logdiag.exp())

    def variational_parameters(self):
        ps = [self.m] + ([self.L_offdiag, self.L_logdiag] if self.posterior == "fg" else [self.log_s])
        return ps + ([self.pi_logits] if self.K > 1 else [])

    def hyper_parameters(self):
        return [p for k in self.kernels for p in k.parameters()]

    def likelihood_parameters(self):
        return [p for p in self.likelihood.parameters() if p.requires_grad]

    def inducing_parameters(self):
        """The inducing inputs Z_j (upstream's 'inducing' block, optimised after mog and hyp in its
        MNIST_binary_inducing_data experiment)."""
        return list(self.Z)

    @torch.no_grad()
    def init_posterior(self, m0: torch.Tensor | None = None):
        """Upstream init: FG S_j = K_zz_j, m = y at the inducing points (all components share the mean)."""
        if m0 is not None:
            self.m.copy_(m0.expand_as(self.m))
        if self.posterior == "fg":
            for j, L in enumerate(self.kzz_chol()):
                self.L_offdiag[j] = torch.tril(L, -1)
                self.L_logdiag[j] = L.diagonal().log()

    # ------------------------------------------------------------------ kernel terms
    def kzz_chol(self):
        eye = torch.eye(self.M, dtype=torch.float64, device=self.m.device)
        factor = CholeskyPolicy(self.latent_noise).factor
        return [factor(k(z, z), eye) for k, z in zip(self.kernels, self.Z)]

    def projections(self, X, Ls=None):
        """A_j (N x M) and Ktilde_j (N) for every process."""
        Ls = self.kzz_chol() if Ls is None else Ls
        out = []
        for k, z, L in zip(self.kernels, self.Z, Ls):
            Kzx = k(z, X)
            A = torch.cholesky_solve(Kzx, L).T
            kt = (k.diag(X) + self.latent_noise - (A * Kzx.T).sum(-1)).clamp_min(0.0)
            out.append((A, kt))
        return out

    def marginals(self, X, Ls=None):
        """b (K, N, Q) and Sigma (K, N, Q)."""
        bs, Ss = [], []
        cholS = self.chol_S() if self.posterior == "fg" else None
        for j, (A, kt) in enumerate(self.projections(X, Ls)):
            bs.append(self.m[:, j] @ A.T)  # (K, N)
            if cholS is not None:
                Ss.append((kt + (A @ cholS[j]).square().sum(-1)).unsqueeze(0))
            else:
                Ss.append(kt + self.log_s[:, j].exp() @ A.square().T)
        return torch.stack(bs, -1), torch.stack(Ss, -1)

    # ------------------------------------------------------------------ ELBO terms
    def cross(self, Ls=None):
        """L_cross = -1/2 sum_k pi_k sum_j [M log 2 pi + log|K_j| + m_kj^T K_j^{-1} m_kj + tr K_j^{-1} S_kj]."""
        Ls = self.kzz_chol() if Ls is None else Ls
        total = 0.0
        for j, L in enumerate(Ls):
            logdet = 2 * L.diagonal().log().sum()
            a = torch.linalg.solve_triangular(L, self.m[:, j].T, upper=False)  # (M, K)
            quad = a.square().sum(0)
            if self.posterior == "fg":
                tr = torch.linalg.solve_triangular(L, self.chol_S()[j], upper=False).square().sum().unsqueeze(0)
            else:
                Linv = torch.linalg.solve_triangular(L, torch.eye(self.M, dtype=L.dtype, device=L.device), upper=False)
                tr = self.log_s[:, j].exp() @ Linv.square().sum(0)  # diag K^{-1}
            total = total - 0.5 * (self.M * LOG_2PI + logdet + quad + tr)
        return (self.pi * total).sum()

    def entropy_bound(self):
        """L_ent = -sum_k pi_k log sum_l pi_l N(m_k; m_l, S_k + S_l) (eqs. 1-3), log-sum-exp stable."""
        if self.posterior == "fg":  # K = 1, m_k = m_l: -log N(m; m, 2 S)
            logdet2S = 2 * self.L_logdiag.sum() + self.Q * self.M * math.log(2.0)
            return 0.5 * (self.Q * self.M * LOG_2PI + logdet2S)
        s = self.log_s.exp()
        v = s[:, None] + s[None, :]  # (K, K, Q, M)
        d = self.m[:, None] - self.m[None, :]
        logN = -0.5 * (LOG_2PI + v.log() + d.square() / v).sum((-1, -2))  # (K, K)
        log_pi = torch.log_softmax(self.pi_logits, 0)
        return -(self.pi * torch.logsumexp(log_pi[None, :] + logN, 1)).sum()

    def entropy_exact_fg(self):
        return self.Q * self.M * 0.5 * (1 + LOG_2PI) + self.L_logdiag.sum()

    def entropy(self):
        return self.entropy_exact_fg() if self.entropy_kind == "exact" else self.entropy_bound()

    def ell(self, X, y, eps, Ls=None):
        """(value, surrogate) of L_ell = sum_n sum_k pi_k E_{q_k(n)}[log p(y_n | f_n)]; eps (S, N, Q) standard normal."""
        b, Sig = self.marginals(X, Ls)
        pi = self.pi
        lik = self.likelihood
        if self.estimator == "exact":
            v = (pi[:, None] * lik.expected_log_prob(b, Sig, y)).sum()
            return v, v
        if self.estimator == "reparam":
            f = b[:, None] + Sig.sqrt()[:, None] * eps  # (K, S, N, Q)
            v = (pi * lik.log_prob(f, y).mean(1).sum(1)).sum()
            return v, v
        # score function: samples held fixed, gradients through log q_k(n)(f) = log N(f; b, Sigma)
        sd = Sig.detach().sqrt()
        f = b.detach()[:, None] + sd[:, None] * eps
        lp = lik.log_prob(f, y)  # (K, S, N); depends on likelihood parameters only
        gb, gS = self._score_terms(lp.detach(), eps, sd, Sig.detach())
        lp_mean = lp.mean(1).sum(1)  # (K,)
        value = (pi * lp_mean).sum()
        terms = (pi.detach()[:, None, None] * (gb * b + gS * Sig)).sum() + (pi.detach() * lp_mean).sum() \
            + (pi * lp_mean.detach()).sum()
        return value, value.detach() + terms - terms.detach()

    def _score_terms(self, g, eps, sd, var):
        """E[g h] (eqs. 12-14) or, for score_cv, E[(g - a) h] with a = Cov(g h, h) / V(h) per (k, n, j) (eqs. 26-29),
        for both score functions h of log N(f; b, Sigma): d/db = eps / sd and d/dSigma = (eps^2 - 1) / (2 Sigma).
        g (K, S, N): log p at the samples; eps (S, N, Q). a comes from the first cv_samples samples (upstream: S/10)
        and is applied to all S; reusing those samples biases the estimate by O(1/cv_samples); cv_holdout=True
        averages over the other S - cv_samples only (unbiased).
        Each h is e / scale with e a function of eps alone and scale constant over the samples, so a = Cov(g e, e) /
        V(e) and the estimate is (E[g e] - a E[e]) / scale: the (K, S, N, Q) arrays h and g h are never formed
        (2x faster on USPS-sized blocks; docs/performance.md). Returns (d/db, d/dSigma) terms, each (K, N, Q)."""
        g = g[..., None]  # (K, S, N, 1)
        out = []
        for e, scale in ((eps, sd), (eps.square().sub_(1), 2 * var)):
            if self.estimator == "score":
                out.append((g * e).mean(1) / scale)
                continue
            c = self.cv_samples or max(2, g.shape[1] // 10)
            gc, ec = g[:, :c], e[:c]
            mean_c = ec.mean(0)
            cov = (gc * (ec * (ec - mean_c))).mean(1)  # Cov(g e, e) = E[g e (e - E e)] over the first c samples
            a = cov / ec.var(0, unbiased=False).clamp_min(1e-300)
            gr, er = (g[:, c:], e[c:]) if self.cv_holdout else (g, e)
            out.append(((gr * er).mean(1) - a * er.mean(0)) / scale)
        return out

    def points_per_block(self, num_samples: int, device: torch.device | None = None) -> int:
        """Points per block of L_ell for `num_samples` samples: about SAMPLE_BLOCK_ELEMENTS elements in each
        (K, S, block, Q) sample array (SAMPLE_BLOCK_ELEMENTS_GPU on a CUDA device), at least MIN_POINTS_PER_BLOCK.
        device: where the samples live (default: the model's)."""
        device = self.m.device if device is None else torch.device(device)
        budget = SAMPLE_BLOCK_ELEMENTS_GPU if device.type == "cuda" else SAMPLE_BLOCK_ELEMENTS
        return max(MIN_POINTS_PER_BLOCK, budget // (self.K * num_samples * self.Q))

    def elbo(self, X, y, eps, chunk: int | None = None):
        """(value, surrogate): value is the ELBO estimate, surrogate has the estimator's gradient. chunk: evaluate
        L_ell over blocks of that many points (bounds the (K, S, chunk, Q) sample arrays' memory; the terms are per
        point, control variates included, so the blocks give the same sum to rounding; train.fit passes
        points_per_block)."""
        Ls = self.kzz_chol()
        fixed = self.cross(Ls) + self.entropy()
        N = X.shape[0]
        step = chunk or N
        v, sur = 0.0, 0.0
        for i in range(0, N, step):
            sl = slice(i, i + step)
            vi, si = self.ell(X[sl], y[sl], None if eps is None else eps[:, sl], Ls)
            v, sur = v + vi, sur + si
        return fixed + v.detach(), fixed + sur

    def draw_eps(self, S, N, generator=None):
        return torch.randn(S, N, self.Q, dtype=torch.float64, generator=generator, device=self.m.device)

    # ------------------------------------------------------------------ prediction
    @torch.no_grad()
    def log_predictive(self, Xs, ys, eps=None):
        """log p(y*) = log sum_k pi_k int p(y*|f) N(f; b_k*, Sigma_k*) df per test point."""
        b, Sig = self.marginals(Xs)
        lp = torch.stack([self.likelihood.log_predictive(b[k], Sig[k], ys, eps) for k in range(self.K)])
        return torch.logsumexp(torch.log_softmax(self.pi_logits, 0)[:, None] + lp, 0)
