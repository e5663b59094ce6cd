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


def _results(root):
    import csv

    out = {}
    for p in sorted(root.glob("default/*/run.json")):
        rows = [{k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader((p.parent / "curve.csv").open())]
        out[p.parent.name] = (json.loads(p.read_text()), rows)
    return out


def test_warned_job_checkpoints_requeues_and_resumes(tmp_path, cli_env):
    """SLURM's time-limit warning (sbatch --signal=USR2@launcher.signal_delay_s; here sent at once with
    `scancel --signal=USR2`, as SLURM sends it) reaches a job mid-training: the run saves its checkpoint at the
    end of the iteration, submitit requeues the job, the requeued job resumes from the checkpoint, and the run
    ends with the metrics and curve of the same point run without interruption (launcher=local, same threads)."""
    import os
    import time

    _require_slurm()
    point = ["dataset=boston", "model.num_inducing=16", "dtype=float64", "device=cpu", "trainer.progress=off",
             "objective=dlm", "trainer.max_iters=1500", "trainer.tol=-1", "trainer.checkpoint_every_s=1",
             "launcher.cpus=1"]
    env = {**cli_env, "OMP_NUM_THREADS": "1"}
    ref = subprocess.run(cli_command() + ["sweep", *point, "launcher=local", f"results_dir={tmp_path / 'ref'}"],
                         capture_output=True, text=True, env=env, timeout=900)
    assert ref.returncode == 0, ref.stdout + ref.stderr
    root = tmp_path / "slurm"
    proc = subprocess.Popen(cli_command() + ["sweep", *point, "launcher=slurm", "launcher.time_min=20",
                                             "launcher.max_requeues=2", f"results_dir={root}"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 600
        while not list(root.glob("default/*/checkpoint.pt")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.2)
        time.sleep(2)
        # the job's folder, named by its id (beside it submitit keeps a hidden link to the batch script)
        (job_dir,) = [p for p in root.glob("default/_hydra/sweep_*/.submitit/*") if p.name.isdigit()]
        warned = subprocess.run(["scancel", "--signal=USR2", job_dir.name], capture_output=True, text=True)
        assert warned.returncode == 0, warned.stderr
        out = proc.communicate(timeout=900)[0]
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert "sweep: 1 jobs, 0 skipped, 1 run (1 ok, 0 diverged, 0 failed)" in out, out
    log = next(job_dir.glob("*_0_log.out")).read_text()
    assert "Caught signal SIGUSR2" in log and "Requeued job" in log, log
    assert log.count("Starting with JobEnvironment") == 2, log  # the job ran twice: before and after its requeue
    got, want = _results(root), _results(tmp_path / "ref")
    assert set(got) == set(want) and len(got) == 1
    for name, (ra, ca) in want.items():
        rb, cb = got[name]
        assert rb["metrics"] == ra["metrics"] and cb == ca  # every digit
        assert rb["train"]["iterations"] == 1500 and rb["train"]["resumed_at"], rb["train"]
    assert not list(root.rglob("checkpoint*.pt")), os.listdir(root)
