"""The FP paper (Sheth & Khardon, AISTATS 2016): the optimisers GRAD / FPb / FPi / FPi + FP-mean (optim.py), the
plugin, frozen hyperparameters and the site diagnostics (fpdiag.py). The latent Gaussian model and the site expectations
they optimise live below the papers, in gpmath/lgm.py and gpmath/sites.py."""
