#!/usr/bin/env bash
# Six-run check of the run harness (issue 56): one small run per paper kind into OUT, so that a refactor can be
# compared before/after with scripts/compare_runs.py (same run names, all metrics equal).
# usage: scripts/six_run_check.sh OUT   (needs the shipped data only; DLM_BENCH_MIRROR not required)
set -euo pipefail
out=${1:?usage: six_run_check.sh OUT}
db=${DLM_BENCH:-.venv/bin/dlm-bench}
export OMP_NUM_THREADS=1
$db run results_dir=$out objective=dlm objective.beta=0.5 trainer.max_iters=200 trainer.progress=off seed=1
$db run results_dir=$out model=pac_sgp objective=pac_kl protocol=pac trainer.max_iters=100 trainer.progress=off
$db run results_dir=$out model=fitc trainer.max_iters=100 trainer.progress=off
$db run results_dir=$out model=lgm_sparse lgm.max_iters=5 lgm.num_inducing=20
$db run results_dir=$out model=sggpm dataset=ucsdpeds1l sggpm.max_folds=1 sggpm.max_outer=3
$db run results_dir=$out model=savigp savigp.max_iter=2 savigp.num_samples=200 savigp.pred_samples=200
