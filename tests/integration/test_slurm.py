"""`dlm-bench sweep launcher=slurm` against a real SLURM cluster (make test-slurm starts a local one).

Skipped unless `sbatch` and `sinfo` exist and `sinfo` shows a usable node.
"""

import json
import re
import shutil
import subprocess

import pytest

from tests.helpers import cli_command

pytestmark = pytest.mark.slurm

USABLE_STATES = {"idle", "mixed", "allocated", "completing"}


def _require_slurm() -> None:
    missing = [exe for exe in ("sbatch", "sinfo") if shutil.which(exe) is None]
    if missing:
        pytest.skip(f"no SLURM client here ({', '.join(missing)} not on PATH); make test-slurm starts a local cluster")
    try:
        proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.skip("sinfo did not answer within 30 s (is slurmctld running?)")
    states = {s.strip().rstrip("*~#!%$@^-") for s in proc.stdout.split()}
    if proc.returncode != 0 or not states & USABLE_STATES:
        detail = proc.stderr.strip().splitlines()[-1:] or [f"node states {sorted(states) or 'none'}"]
        pytest.skip(f"sinfo shows no idle/mixed/allocated node ({detail[0]}); make test-slurm starts a local cluster")


def test_sweep_runs_as_slurm_jobs(tmp_path, cli_env):
    _require_slurm()
    args = [
        "sweep", "launcher=slurm", "launcher.time_min=5", "seed=0,1,2,3", "trainer.max_iters=20",
        # setup lines run in each batch script before the job: SLURM_JOB_ID shows it is a SLURM job
        'launcher.setup=["echo setup-1 slurm_job_id=$SLURM_JOB_ID","echo setup-2"]',
        f"results_dir={tmp_path}",
    ]
    proc = subprocess.run(cli_command() + args, capture_output=True, text=True, env=cli_env, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "sweep: 4 jobs, 0 skipped, 4 run (4 ok, 0 diverged, 0 failed)" in proc.stdout, out

    records = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("default/*/run.json"))]
    assert len(records) == 4, out
    assert [r["status"] for r in records] == ["ok"] * 4
    assert {r["seed"] for r in records} == {0, 1, 2, 3}
    assert all(r["train"]["iterations"] == 20 for r in records)

    # they ran as SLURM jobs: submitit keeps one folder per array task, <array job id>_<index>, holding the
    # task's stdout (<folder>_<rank>_log.out) in which submitit, inside the job, logs the job id it read
    # from SLURM_ARRAY_JOB_ID / SLURM_ARRAY_TASK_ID
    submitit_dirs = list(tmp_path.glob("default/_hydra/sweep_*/.submitit"))
    assert len(submitit_dirs) == 1, f"no submitit folder under {tmp_path}/default/_hydra: {out}"
    logs = sorted(submitit_dirs[0].glob("*/*_log.out"))
    assert len(logs) == 4, [str(p) for p in submitit_dirs[0].rglob("*")]
    job_ids = {log.parent.name for log in logs}
    assert len(job_ids) == 4 and all(re.fullmatch(r"\d+_\d+", j) for j in job_ids), job_ids
    assert len({j.split("_")[0] for j in job_ids}) == 1, job_ids  # one job array
    for log in logs:
        text = log.read_text()
        assert f"JobEnvironment(job_id={log.parent.name}," in text, text
        assert "Job completed successfully" in text, text
        assert re.search(r"^setup-1 slurm_job_id=\d+$", text, re.M) and "\nsetup-2\n" in text, text
