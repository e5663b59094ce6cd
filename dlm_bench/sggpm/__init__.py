"""Sparse variational inference for generalized GP models (Sheth, Wang & Khardon, ICML 2015): sparse and SoD
models on the LGM core (model.py), the cyclic block driver with Newton-m / FP-V / L-BFGS-L (optim.py), the dual
method (dual.py), the Laplace approximation (laplace.py), upstream's protocol and index files (protocol.py),
metrics (metrics.py) and the runner path (run.py)."""

METHODS = ("laplace_sod", "grad_sod", "dual_sod", "fp_sod", "grad_sparse", "dual_sparse", "fp_sparse")
