# dlm_bench — see README.md. `make help` lists the targets.
PYTHON     ?= python3
VENV       ?= .venv
# TORCH_SPEC is installed first, as pip resolves it. On a fresh Linux x86_64 machine (no local wheel, plain PyPI),
# torch==2.13.0 is the CUDA 13 build and pulls ~20 more wheels (nvidia-cublas, -cudnn-cu13, -nccl-cu13, -cusparselt,
# triton, cuda-toolkit, ...; several GB; `pip install --dry-run --report` against pypi.org, 2026-12-03); macOS and
# Windows get the CPU build. A machine whose pip finds a local torch-2.13.0+cpu wheel (find-links) installs that.
# CPU only on Linux: make install TORCH_SPEC="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
# Other CUDA builds:  make install TORCH_SPEC="torch --index-url https://download.pytorch.org/whl/cu124"
TORCH_SPEC ?= torch==2.13.0
ARGS       ?=
RESULTS    ?= results
# make reproduce-<paper>-<figure> [SMOKE=1] [LAUNCHER=joblib|slurm|local]
SMOKE      ?=
LAUNCHER   ?= joblib
EXPERIMENTS := $(patsubst conf/experiment/%.yaml,%,$(filter-out %_smoke.yaml,$(wildcard conf/experiment/*.yaml)))
PY         := $(VENV)/bin/python
STAMP      := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install run test test-slow test-slurm bench bench-peers grad-bias report scoreboard experiments clean

help:  ## list the targets
	@grep -E '^[a-zA-Z_%-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  make %-12s %s\n", $$1, $$2}'

install: $(STAMP)  ## create .venv: torch first (TORCH_SPEC), then pip install -e ".[dev]"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@if $(PY) -c "import torch" 2>/dev/null; then \
	  echo "torch already importable: $$($(PY) -c 'import torch; print(torch.__version__)')"; \
	else \
	  echo "installing $(TORCH_SPEC) first"; $(PY) -m pip install $(TORCH_SPEC); \
	fi
	$(PY) -m pip install -e ".[dev]"
	@touch $(STAMP)

run: $(STAMP)  ## run the default experiment (extra Hydra overrides: make run ARGS="objective=dlm")
	$(VENV)/bin/dlm-bench run $(ARGS)

# Both cores: pytest-xdist spreads the test files over one worker per core (TEST_WORKERS=1 for a serial run).
TEST_WORKERS ?= auto
test: $(STAMP)  ## fast test suite (no slow/network/slurm tests), one pytest-xdist worker per core
	$(PY) -m pytest -q -n $(TEST_WORKERS) $(ARGS)

test-slow: $(STAMP)  ## only the tests marked slow (long end-to-end runs), one worker per core
	$(PY) -m pytest -q -n $(TEST_WORKERS) -m slow $(ARGS)

# Starts a local single-node SLURM (needs root or sudo; apt-get installs slurm-wlm + munge the first
# time), runs the tests marked slurm and stops the cluster again if it was not running before.
# A cluster that cannot be installed/started is a printed skip (exit 0); a failing test is a failure.
test-slurm: $(STAMP)  ## start a local SLURM (scripts/local-slurm.sh), run the slurm tests
	@was_up=0; bash scripts/local-slurm.sh status >/dev/null 2>&1 && was_up=1; \
	if ! out=$$(bash scripts/local-slurm.sh start 2>&1); then \
	  echo "$$out" | tail -n 20 | head -n -1; \
	  [ $$was_up = 1 ] || bash scripts/local-slurm.sh stop >/dev/null 2>&1 || true; \
	  echo "SLURM could not be installed/started here: $$(echo "$$out" | tail -n 1); test-slurm skipped"; \
	  exit 0; \
	fi; \
	echo "$$out" | tail -n 2; \
	rc=0; $(PY) -m pytest -q -rs -m slurm $(ARGS) || rc=$$?; \
	if [ $$was_up = 0 ]; then bash scripts/local-slurm.sh stop | tail -n 1; fi; \
	exit $$rc

experiments:  ## list the reproduce-<paper>-<figure> targets (one per conf/experiment/*.yaml)
	@for e in $(EXPERIMENTS); do echo "  make reproduce-$$(echo $$e | tr _ -)   [SMOKE=1]"; done

reproduce-%: $(STAMP)  ## sweep one experiment config (SMOKE=1: its _smoke variant if there is one), then report
	@exp=$$(echo $* | tr - _); \
	if [ -n "$(SMOKE)" ] && [ -f conf/experiment/$${exp}_smoke.yaml ]; then exp=$${exp}_smoke; fi; \
	test -f conf/experiment/$$exp.yaml || { echo "no experiment config conf/experiment/$$exp.yaml (make experiments lists them)"; exit 2; }; \
	$(VENV)/bin/dlm-bench sweep experiment=$$exp launcher=$(LAUNCHER) results_dir=$(RESULTS) $(ARGS) --estimate && \
	$(VENV)/bin/dlm-bench sweep experiment=$$exp launcher=$(LAUNCHER) results_dir=$(RESULTS) $(ARGS) && \
	$(VENV)/bin/dlm-bench report $(RESULTS)/$$exp

# FP paper (Sheth & Khardon 2016) Fig. 1 / supplement Fig. 1: sign maps of d gamma / dv (no sweep).
reproduce-fp-fig1: $(STAMP)
	$(PY) scripts/fp_fig1.py $(RESULTS)/fp_fig1 $(if $(SMOKE),--grid 50,)

# Supplement Fig. 2: gamma_i vs FP update, GLM logistic, m = m*, V0 = I (SMOKE=1: generated wlan-like data, the
# three 2-cycling points with the largest gap; otherwise wlan_inout_fp, paper indices 3591, 6311, 10301).
reproduce-fp-supp2: $(STAMP)
	$(PY) scripts/fp_supp2.py $(RESULTS)/fp_supp2$(if $(SMOKE),_smoke,) $(if $(SMOKE),--dataset synthetic_wlan --indices auto,) $(ARGS)

# Supplement Fig. 5, smoke: generated logistic data written once before its sweep.
FP_SUPP5_DATA := results/fp_supp5_data/logistic_synth_d150.csv
reproduce-fp-supp5: $(if $(SMOKE),$(FP_SUPP5_DATA),)
$(FP_SUPP5_DATA): | $(STAMP)
	$(PY) scripts/make_logistic_synthetic.py $(dir $@) --n 1500 --dims 50,100,150

# Sheth, Wang & Khardon (2015) Fig. 1: contraction test of the FP operator (SMOKE=1: 50 repetitions), two readings:
# all_prior = the 1000 inputs are the data, m = prior mean; active_mode = data on the active set, m = Newton mode.
SGGPM_FIG1 = $(RESULTS)/sggpm_fig1$(if $(SMOKE),_smoke,)
reproduce-sggpm-fig1: $(STAMP)
	$(PY) scripts/sggpm_fig1.py $(SGGPM_FIG1)/all_prior $(if $(SMOKE),--reps 50,) $(ARGS)
	$(PY) scripts/sggpm_fig1.py $(SGGPM_FIG1)/active_mode --m-at mode --data active $(if $(SMOKE),--reps 50,) $(ARGS)


# App. F of the PAC-GP paper trains on a synthetic GP data set, written once before its sweep.
PAC_APPF_DATA := results/pac_appF_data/gp_synthetic_d3.csv
reproduce-pac-appF: $(PAC_APPF_DATA)
$(PAC_APPF_DATA): | $(STAMP)
	$(PY) scripts/make_gp_synthetic.py $@ --n 12000 --d 3 --seed 0
# pac_appF_draws: the paper's protocol, one data set (its own lengthscales) per repetition, seeds 0-67
PAC_APPF_DRAWS := results/pac_appF_data/draws/.written
reproduce-pac-appF-draws: $(PAC_APPF_DRAWS)
$(PAC_APPF_DRAWS): | $(STAMP)
	$(PY) scripts/make_gp_synthetic.py 'results/pac_appF_data/draws/seed{seed}/gp_synthetic_d3.csv' --n 12000 --d 3 --seeds 0-67 && touch $@

report: $(STAMP)  ## report on everything under RESULTS (default results/)
	$(VENV)/bin/dlm-bench report $(RESULTS)

scoreboard: $(STAMP)  ## regenerate docs/reproductions/README.md (every paper figure/table: status, numbers, report)
	$(PY) -m dlm_bench.report.scoreboard $(ARGS)

bench: $(STAMP)  ## benchmarks, offline (docs/performance.md; ARGS=--quick / --smoke; ARGS="--device cuda": CPU vs GPU per step): Trainer/bare GPyTorch, uPS/bMC, fixed/joint path, batched beta grid, Student-t DLM, Poisson quadrature DLM (Laplace-Hermite cascade), SAVIGP ELBO, PAC-SGP, sq-DLM and SGPR fused paths, ordinal site, 1/default threads, dlm-bench --help startup
	$(PY) scripts/bench.py $(ARGS)

# The peer benchmark's own venv (git-ignored, never part of install/test): torch first (TORCH_SPEC, as `make install`),
# then GPflow with a CPU TensorFlow. gpflow and tf-keras are installed --no-deps because both require the full
# `tensorflow` wheel, whose module tensorflow-cpu provides; TFP/tf-keras are pinned to the TF release they are built
# against. GPflow requires numpy<2, so pandas stays below 3 (which needs numpy 2) in this venv.
PEERS_VENV ?= .venv-peers
PEERS_PY   := $(PEERS_VENV)/bin/python
PEERS_STAMP := $(PEERS_VENV)/.installed
PEERS_SPEC ?= gpflow==2.11.2 tensorflow-cpu==2.19.1 tensorflow-probability==0.25.0 tf-keras==2.19.0

$(PEERS_STAMP): pyproject.toml
	@test -x $(PEERS_PY) || $(PYTHON) -m venv $(PEERS_VENV)
	@if $(PEERS_PY) -c "import torch" 2>/dev/null; then \
	  echo "torch already importable: $$($(PEERS_PY) -c 'import torch; print(torch.__version__)')"; \
	else \
	  echo "installing $(TORCH_SPEC) first"; $(PEERS_PY) -m pip install $(TORCH_SPEC); \
	fi
	$(PEERS_PY) -m pip install -e .
	$(PEERS_PY) -m pip install "numpy<2" "pandas<3" $(filter-out gpflow% tf-keras%,$(PEERS_SPEC)) \
	  check-shapes deprecated multipledispatch tabulate
	$(PEERS_PY) -m pip install --no-deps $(filter gpflow% tf-keras%,$(PEERS_SPEC))
	$(PEERS_PY) -c "import gpflow, tensorflow as tf; print('gpflow', gpflow.__version__, 'tensorflow', tf.__version__)"
	@touch $(PEERS_STAMP)

bench-peers: $(PEERS_STAMP)  ## dlm_bench vs GPflow ms/iteration (own venv .venv-peers; SVGP Adam step, collapsed SGPR bound)
	$(PEERS_PY) scripts/bench_peers.py $(ARGS)

grad-bias: $(STAMP)  ## DLM gradient-bias statistics at initialisation on abalone (Fig. 1(g)(h), supplement Fig. 8)
	$(PY) scripts/grad_bias.py --out $(RESULTS)/dlm_grad_bias $(ARGS)

clean:  ## remove the venv, caches and build outputs (results/ is kept)
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
