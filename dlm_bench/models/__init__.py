"""The GPyTorch models fitted by the shared Trainer (svgp, sgpr, fitc, exact_gp, pac_gp, pac_sgp) and what they share:
components.py (kernel, Z, likelihood), base.py (ModelBundle), fixed.py (the fixed-hyperparameter stage 1) and
plugin.py (what the run harness calls for all of them). What each model combines with is declared in
dlm_bench/papers/dlm.py and pac.py.
"""
