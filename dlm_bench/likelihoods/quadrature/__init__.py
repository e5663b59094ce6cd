"""The one place where Gaussian expectations of a likelihood are integrated (issue 26).

Every non-closed-form quantity of every likelihood goes through this package: the likelihoods of likelihoods/
(ELBO and DLM terms, predictive densities and moments), the LGM sites (gpmath/sites.py), the uPS value and its
exact fallback sampler (estimators/ups.py), the estimator classes (estimators/quadrature.py). The panel rule,
`AdaptiveRule` (panels.py), is the one that is accurate everywhere; two cheaper rules are used only where they are shown to
be as accurate: Gauss-Hermite tiers for E_q[log p] of smooth likelihoods at small var (`expected_log_prob`'s
`hermite_tiers`) and Laplace-centred Gauss-Hermite with an embedded error estimate for log E_q[p] of log-concave
likelihoods (`log_marginal`'s `laplace_hermite`). Both fall back to `AdaptiveRule` point by point.

Modules, one a rule or job (the public names below are importable from this package):
  common.py           callable types, float64 promotion, the normal log-density, autograd derivatives
  panels.py           the adaptive rule: composite Gauss-Legendre on panels that adapt to each point
                      (`AdaptiveRule`), and the grouping of a batch by feature levels
  rule_sums.py        the rule's weighted sums as autograd Functions with analytic backward
  panel_integrals.py  integrals by the panel rule: E_q[log p] with its derivatives, log E_q[p], E_q[fn]
  hermite.py          plain Gauss-Hermite tiers for E_q[log p]
  laplace_hermite.py  Laplace-centred Gauss-Hermite cascade for log E_q[p]
  tilted_mode.py      the tilted density's mode and Laplace width (bracketed Newton)
  sampler.py          samples from the tilted density (uPS's exact fallback)
This module chooses between the rules (`expected_log_prob`, `log_marginal`).
"""

from __future__ import annotations

from typing import Sequence

from .common import LOG_2PI, Derivs, Features, LogLik, _as64, _picker, _prepare, autograd_derivs
from .hermite import _expected_log_prob_hermite
from .laplace_hermite import _laplace_hermite
from .panel_integrals import (
    STEIN_RATIO,
    _expected_log_prob_adaptive,
    _log_marginal_panels,
    expectation,
    expected_log_prob_and_derivatives,
)
from .panels import PANEL_NODES, POINT_MASS, Q_OFFSETS, RANGE_SD, AdaptiveRule
from .sampler import sample_tilted
from .tilted_mode import NEWTON_ITERS, tilted_mode


def expected_log_prob(log_lik: LogLik, y, mu, var, features: Features = (), derivs: Derivs | None = None,
                      peak: tuple | None = None, hermite_tiers: Sequence[tuple[int, float]] = ()):
    """E_N(f|mu,var)[log p(y|f)] per point. `peak` = (c, s^2): where N(f|mu,var) |log p(y|f)| peaks if not
    near mu (log p growing like e^f: c = mu + var), panelled like the tilted density of log_marginal.

    `hermite_tiers` ((nodes, max var / width^2), ascending; width = the smallest feature width, 1 without
    features): for a log-likelihood analytic in a strip around the real axis (probit, logistic) plain Gauss-Hermite
    converges geometrically while var / width^2 is small, at a tenth of the adaptive rule's nodes. Points within
    the last tier's limit use the fewest nodes that cover the batch's largest ratio there; the rest, and every
    point when `peak` is given, use the adaptive rule. The limits are where the rule's error, values and
    gradients, stays below 1e-8 against a dense grid (likelihoods/probit.py); the contract test checks it."""
    if hermite_tiers and peak is None:
        return _expected_log_prob_hermite(log_lik, y, mu, var, features, derivs, hermite_tiers)
    return _expected_log_prob_adaptive(log_lik, y, mu, var, features, derivs, peak)


def log_marginal(log_lik: LogLik, y, mu, var, features: Features = (), derivs: Derivs | None = None,
                 centre: bool = True, laplace_hermite: bool = False):
    """log E_N(f|mu,var)[p(y|f)] per point (logsumexp over the nodes). centre=False leaves out the tilted
    mode's panels: for a bounded likelihood with polynomial tails (Student-t) the tilted density's mass lies
    on q's panels and the likelihood's feature panels already.

    laplace_hermite (log-concave likelihoods: the tilted density is unimodal): first Gauss-Hermite centred on
    the tilted mode c* with its Laplace width s*, in the rules of LAPLACE_NODES; where two successive rules agree
    to LAPLACE_TOL in the value and in both gradients (an embedded error estimate, as Gauss-Kronrod's) the finer
    value is the answer, the points left after the last pair take the panel rule. 32-112 likelihood evaluations
    per point instead of ~380."""
    y, mu, var, dtype = _prepare(y, mu, var)
    y64, mu64, var64 = _as64(y, mu, var)
    d = derivs or autograd_derivs(log_lik)
    tilted = tilted_mode(log_lik, d, y64, mu64, var64.clamp_min(1e-300)) if centre else None
    if laplace_hermite and tilted is not None:
        fast, ok = _laplace_hermite(log_lik, y64, mu64, var64, features, tilted)
        if bool(ok.all()):
            return fast.to(dtype)
        if bool(ok.any()):
            bad = (~ok).reshape(-1).nonzero().squeeze(-1)
            pick = _picker(mu64.shape, bad)
            slow = _log_marginal_panels(log_lik, pick(y64), pick(mu64), pick(var64),
                                        [(pick(c), pick(w)) for c, w in features], d,
                                        tuple(pick(t) for t in tilted))
            return fast.reshape(-1).index_put((bad,), slow).reshape(mu64.shape).to(dtype)
    return _log_marginal_panels(log_lik, y64, mu64, var64, features, d, tilted).to(dtype)


__all__ = ["LOG_2PI", "NEWTON_ITERS", "PANEL_NODES", "POINT_MASS", "Q_OFFSETS", "RANGE_SD", "STEIN_RATIO", "AdaptiveRule",
           "Derivs", "Features", "LogLik", "autograd_derivs", "expectation", "expected_log_prob",
           "expected_log_prob_and_derivatives", "log_marginal", "sample_tilted", "tilted_mode"]
