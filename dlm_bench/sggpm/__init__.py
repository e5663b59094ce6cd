"""Sparse variational inference for generalized GP models (Sheth, Wang & Khardon, ICML 2015): sparse and SoD
models on the LGM core (model.py), the cyclic block driver with Newton-m / FP-V / L-BFGS-L (optim.py), the dual
method (dual.py), the Laplace approximation (laplace.py), upstream's protocol and index files (protocol.py),
metrics (metrics.py) and the runner path (plugin.py). The sggpm.method choices, METHODS, are declared with
SggpmConfig (papers/sggpm.py)."""
