"""Shared GP maths, below the model families and the papers: kernels on plain tensors (kernels.py), the one Cholesky
policy (cholesky.py), log det C, diag(C^{-1}) and C^{-1} y with a closed-form backward (inverse_terms.py), and the
latent Gaussian model core of the FP and SGGPM papers (lgm.py, sites.py). It imports only leaves and the likelihoods
(docs/architecture.md, tests/unit/test_layers.py)."""
