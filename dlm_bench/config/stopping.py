"""The stopping-rule defaults of the LGM optimisers, one home for the FP paper (lgm/optim.StopRule, the lgm config
section in config/schema.py) and the sparse GGPMs (sggpm/optim.py, dual.py, hyperparameter_learning.py).

Both papers stop as minFunc does by default (Sheth & Khardon 2016, supplement sec. 3; Sheth et al. 2015, upstream
gen_gp_train.m / fp_opt.m), f = -VLB:
"""

GRAD_TOL = 1e-5  # first-order optimality ||grad f||_inf (minFunc optTol)
F_TOL = 1e-9  # progress |f_{k-1} - f_k| (minFunc progTol)
MAX_ITERS = 500  # iterations of one optimiser run (minFunc maxIter)
