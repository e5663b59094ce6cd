"""The cost model of `dlm-bench sweep --estimate` (dlm_bench/sweeps/cost_estimate.py) against measured wall times: the
run.json archives committed under docs/reproductions (runs.tgz), each a real run with its own train.wall_s."""

import json
import tarfile
from collections import defaultdict
from pathlib import Path
from statistics import median

import pytest

from dlm_bench.sweeps import cost_estimate as ce

REPRODUCTIONS = Path(__file__).resolve().parents[3] / "docs" / "reproductions"
PLANNING_SECONDS = 60  # classes whose runs take longer than this are the ones a researcher plans a sweep around


# own_data_diabetes: an example of the README, run beside other sessions' work (load 2-4), not a calibration set.
# dlm_samplers_count_abalone: run beside a second sweep and make test, and paused twice by SIGSTOP for ~10 min, so
# its walls are not clean; it also shows a gap the model has not closed (2026-12-07): uPS-10 measured 29.8x the
# modelled seconds (median of 18 runs; uPS-1 6.7x, the exact-gradient count runs 6.0x), i.e. uPS's per-sample cost
# is far above C_SAMPLE's bMC-calibrated one. To recalibrate, re-run it on a quiet machine and drop it from here.
NOT_CALIBRATION = {"own_data_diabetes", "dlm_samplers_count_abalone"}


def archived_runs():
    """(report folder, run record) of every finished run in the committed archives (calibration reports only)."""
    for tgz in sorted(REPRODUCTIONS.glob("*/runs.tgz")):
        if tgz.parent.name in NOT_CALIBRATION:
            continue
        with tarfile.open(tgz) as tar:
            for member in tar:
                if member.name.endswith("run.json"):
                    rec = json.load(tar.extractfile(member))
                    if rec.get("status") in ("ok", "diverged") and isinstance(rec.get("config"), dict):
                        yield tgz.parent.name, rec


@pytest.fixture(scope="module")
def archive():
    return list(archived_runs())


@pytest.fixture(scope="module")
def measured_vs_modelled(archive):
    """Per (report, model, estimator, samples, batched): the measured seconds and the cost model's, run by run."""
    out = defaultdict(list)
    for report, rec in archive:
        batched = bool(rec["train"].get("batched"))
        config = rec["config"]
        if config["dataset"]["name"] == "csv" and not Path(config["dataset"]["path"]).is_file():
            # the run's own file (pac_appF's generated data) is not in the clone: its recorded training size stands in
            config = {**config, "protocol": {**config["protocol"], "train_size": rec["train_size"]}}
        m = ce.modelled_seconds(config, rec["model"], rec.get("likelihood"), batched)
        s = ce.run_seconds(rec)
        if m and s:
            est = rec["config"].get("estimator") or {}
            out[(report, rec["model"], est.get("name"), est.get("num_samples"), batched)].append((s, m))
    return out


def test_the_archives_are_there(measured_vs_modelled):
    classes = {k[1] for k in measured_vs_modelled}
    assert {"svgp", "sgpr", "fitc", "pac_sgp", "exact_gp", "pac_gp"} <= classes
    assert any(k[0] == "dlm_supp_fig15" and k[3] == 100 for k in measured_vs_modelled)


def test_every_long_class_is_estimated_within_a_factor_of_two(measured_vs_modelled):
    """The median measured / modelled ratio of each class whose runs take, or are modelled to take, a minute or more is
    within [0.5, 2]. Before the L-BFGS factors PAC Table 3's PAC-SGP runs were under-estimated 5.7x; before the sample
    term bMC-100 2.8x; before 2026-12-07 pac_appF's full PAC-GP runs (55 s) were modelled at 157 s."""
    long = {k: v for k, v in measured_vs_modelled.items()
            if max(median(s for s, _ in v), median(m for _, m in v)) >= PLANNING_SECONDS}
    assert len(long) >= 10
    off = {k: round(median(s / m for s, m in v), 2) for k, v in long.items()}
    assert {k: r for k, r in off.items() if not 0.5 <= r <= 2} == {}


def test_the_sample_term_is_what_bmc_100_costs_over_exact(measured_vs_modelled, archive):
    """Supplement Fig. 15 on pol: bMC-100 and exact runs differ only in the estimator; the model's difference matches
    the measured one within 30 %."""
    exact = median(s for s, _ in measured_vs_modelled[("dlm_supp_fig15", "svgp", "exact", None, False)])
    bmc = median(s for s, _ in measured_vs_modelled[("dlm_supp_fig15", "svgp", "bmc", 100, False)])
    rec = next(r for rep, r in archive if rep == "dlm_supp_fig15")
    extra = ce.model_terms({**rec["config"], "estimator": {"name": "bmc", "num_samples": 100}}, "svgp")[1]
    assert extra == pytest.approx(bmc - exact, rel=0.3)


def test_finished_runs_recalibrate_only_their_own_class(tmp_path, archive, monkeypatch):
    """Three finished PAC-SGP runs that took 3x the model's time triple the next PAC-SGP estimate (other settings),
    and leave an SGPR point's estimate at the default factor (this machine probed as fast as the model's, so the
    check does not depend on the load; the probe's scaling: test_model_seconds_scale_with_this_machines_probe)."""
    monkeypatch.setattr(ce, "this_machine", lambda: ce.REFERENCE_PROBE_S)
    pac = [r for rep, r in archive if rep == "pac_table2" and r["model"] == "pac_sgp"][:3]
    for i, rec in enumerate(pac):
        base = ce.model_terms(rec["config"], "pac_sgp")[0]
        rec = {**rec, "train": {**rec["train"], "wall_s": 3 * ce.default_factor(
            ce.cost_class(rec["config"], "pac_sgp", rec.get("likelihood"), False)) * base}}
        (tmp_path / f"r{i}").mkdir()
        (tmp_path / f"r{i}" / "run.json").write_text(json.dumps(rec))
    new = json.loads(json.dumps(pac[0]["config"]))
    new["protocol"]["train_size"] = 1000  # other settings: not estimated from a finished run of the same ones
    est = ce.estimate([(new, "gaussian")], tmp_path)
    assert est.from_model == 1 and est.calibrated_on == 3
    assert est.seconds - ce.RUN_OVERHEAD_S == pytest.approx(3 * ce.modelled_seconds(new, "pac_sgp", "gaussian", False))
    sgpr = json.loads(json.dumps(new))
    sgpr["model"]["name"], sgpr["objective"]["name"] = "sgpr", "elbo"
    est = ce.estimate([(sgpr, "gaussian")], tmp_path)
    assert est.seconds - ce.RUN_OVERHEAD_S == pytest.approx(ce.modelled_seconds(sgpr, "sgpr", "gaussian", False))


def test_model_seconds_scale_with_this_machines_probe(tmp_path, archive, monkeypatch):
    """A machine whose speed probe takes twice the reference's gets twice the modelled seconds (overhead aside)."""
    cfg = json.loads(json.dumps(next(r for rep, r in archive if rep == "pac_table2")["config"]))
    cfg["model"]["name"], cfg["objective"]["name"] = "sgpr", "elbo"
    secs = {}
    for probe in (1.0, 2.0):
        monkeypatch.setattr(ce, "this_machine", lambda p=probe: p * ce.REFERENCE_PROBE_S)
        secs[probe] = ce.estimate([(cfg, "gaussian")], tmp_path).seconds - ce.RUN_OVERHEAD_S
    assert secs[2.0] == pytest.approx(2 * secs[1.0])
    assert secs[1.0] == pytest.approx(ce.modelled_seconds(cfg, "sgpr", "gaussian", False))


def test_points_beyond_the_beta_grid_are_not_counted(tmp_path, archive):
    """At n = 3000 the grid [n, n/2, ...] ends at index 18 (3000 / 2^18 = 0.011 >= 0.01): index 19 gives 0.0057,
    whose run trains nothing, so the estimate leaves it out and says so (it counted it as a full run before)."""
    rec = next(r for rep, r in archive if rep == "dlm_supp_pol" and r["config"]["objective"].get("beta_index") is not None)
    points = []
    for k in (18, 19, 23):
        config = json.loads(json.dumps(rec["config"]))
        config["protocol"]["train_size"], config["objective"]["beta_index"] = 3000, k
        points.append((config, rec.get("likelihood")))
    assert [ce.beyond_grid(c) for c, _ in points] == [False, True, True]
    est = ce.estimate(points, tmp_path)
    assert (est.from_model, est.beyond_grid) == (1, 2)
    assert est.seconds == pytest.approx(ce.estimate(points[:1], tmp_path).seconds)
    assert "2 beyond the beta grid" in est.line()


def test_finished_runs_are_scaled_to_this_machine_by_their_speed_probe(tmp_path, archive, monkeypatch):
    """Runs recorded on a machine whose probe read P, estimated on one whose probe reads 2.5 P, count 2.5x their
    seconds; a record without a probe (written before 2026-11-28) counts as it is."""
    rec = next(r for rep, r in archive if rep == "pac_table2" and r["model"] == "pac_sgp")
    wall, probe = 400.0, 0.0012
    for i in range(3):
        r = {**rec, "seed": i, "train": {**rec["train"], "wall_s": wall, "total_wall_s": None},
             "env": {**rec["env"], "speed_probe_s": probe}}
        (tmp_path / f"r{i}").mkdir()
        (tmp_path / f"r{i}" / "run.json").write_text(json.dumps(r))
    point = [(json.loads(json.dumps(rec["config"])), "gaussian")]
    monkeypatch.setattr(ce, "this_machine", lambda: 2.5 * probe)
    est = ce.estimate(point, tmp_path)
    assert est.from_runs == 1 and est.seconds - ce.RUN_OVERHEAD_S == pytest.approx(2.5 * wall)
    for i in range(3):  # the same runs without the probe
        path = tmp_path / f"r{i}" / "run.json"
        r = json.loads(path.read_text())
        del r["env"]["speed_probe_s"]
        path.write_text(json.dumps(r))
    assert ce.estimate(point, tmp_path).seconds - ce.RUN_OVERHEAD_S == pytest.approx(wall)


def test_a_grid_of_own_loop_points_says_it_has_no_estimate_rather_than_zero_minutes():
    """Own-loop models (SGGPM, FP, SAVIGP) have no cost model: before, 35 such points printed "about 0.0 CPU
    minutes", which reads as free."""
    line = ce.Estimate(unknown=35).line()
    assert line.startswith("estimate: 35 new points, no estimate") and "0.0" not in line
    assert "resuming" not in line and ce.Estimate(unknown=2, resumed=1).line().endswith("; 1 resuming from a checkpoint")
    mixed = ce.Estimate(seconds=120.0, from_model=2, unknown=1, units=[60.0, 60.0], load=(0.0, 2, False)).line()
    assert ", 2.0 CPU minutes of runs" in mixed and "1 without an estimate" in mixed
    assert mixed.startswith("estimate: 3 new points, at least ")  # the unknown point's time is not in the wall


def test_the_cost_model_covers_exactly_the_registrys_trainer_models(archive):
    """Which models the cost model covers comes from the registry (ModelSpec.own_loop), not from a second list: every
    Trainer model of the archives gets modelled seconds for its own config, and the same config named as an own-loop
    model (whose fit loop the model does not describe) gets none."""
    from dlm_bench.registry.models import MODELS

    cfg = next(rec["config"] for _, rec in archive if rec["model"] == "svgp")
    trainer = {rec["model"] for _, rec in archive} - {n for n, s in MODELS.items() if s.own_loop}
    assert {"svgp", "sgpr", "fitc", "pac_sgp"} <= trainer
    for name, spec in MODELS.items():
        terms = ce.model_terms(cfg, name)
        assert (terms is None) == spec.own_loop, name
        if terms is not None:
            assert terms[0] > 0


def _own_loop_groups(archive):
    """Per settings key without the size keys: (fit size, seconds, model) of the archived SGGPM and SAVIGP runs."""
    from dlm_bench.sweeps.size_scaling import size_key

    groups = defaultdict(list)
    for _, rec in archive:
        ks = size_key(rec["config"], ce.settings_key) if rec["model"] in ("sggpm", "savigp") else None
        if ks is not None:
            groups[ks[0]].append((ks[1], ce.run_seconds(rec), rec["model"]))
    return groups


def test_own_loop_points_are_scaled_from_smaller_sizes_within_a_factor_of_two(archive):
    """Each archived SGGPM / SAVIGP run of 30 s or more, estimated (size_scaling.scaled_seconds) from the runs of its
    settings at smaller sizes only, as a size sweep that has finished its first sizes sees it, against its measured
    seconds. Before, every such point had no estimate."""
    from dlm_bench.sweeps.size_scaling import scaled_seconds

    ratios = defaultdict(list)
    for runs in _own_loop_groups(archive).values():
        for size, secs, model in runs:
            smaller = [(s, t) for s, t, _ in runs if s < size]
            if smaller and secs >= 30:
                ratios[model].append(secs / scaled_seconds(smaller, size))
    assert len(ratios["sggpm"]) >= 50 and len(ratios["savigp"]) >= 40
    within = {m: sum(0.5 <= r <= 2 for r in v) / len(v) for m, v in ratios.items()}
    assert within["sggpm"] >= 0.9 and within["savigp"] >= 0.65, within
    assert all(0.8 <= median(v) <= 1.25 for v in ratios.values()), {m: median(v) for m, v in ratios.items()}


def test_scaled_seconds_follow_the_power_law_through_the_nearest_sizes():
    """Closed forms: t = 3 M^1.5 through two sizes is followed exactly (between them and past them); one size scales
    by DEFAULT_EXPONENT; a slope outside [0, MAX_EXPONENT] is clamped."""
    from dlm_bench.sweeps import size_scaling as ss

    law = [(m, 3 * m**1.5) for m in (10.0, 40.0)]
    assert ss.scaled_seconds(law, 20.0) == pytest.approx(3 * 20**1.5)
    assert ss.scaled_seconds(law, 160.0) == pytest.approx(3 * 160**1.5)
    assert ss.scaled_seconds(law[:1], 30.0) == pytest.approx(law[0][1] * 3.0**ss.DEFAULT_EXPONENT)
    assert ss.scaled_seconds([(10.0, 5.0), (20.0, 4.0)], 40.0) == pytest.approx(4.0)  # falling: slope 0
    assert ss.scaled_seconds([(10.0, 1.0), (20.0, 100.0)], 40.0) == pytest.approx(100.0 * 2**ss.MAX_EXPONENT)
    assert ss.scaled_seconds([], 40.0) is None


def test_a_size_sweep_estimates_its_larger_sizes_from_the_finished_ones(tmp_path):
    """The musk case of 2026-12-03: SGGPM Fig. 2 points at size_index 0 and 1 finished (one written before
    sggpm.dual_upper_bound existed, as its run.json lacks the key), the point at index 3 gets the power law through
    them (M from the registry's row count, sggpm/protocol.iss), counted apart in the line."""
    from dlm_bench.run import config_dict
    from dlm_bench.sggpm.plugin import fit_size
    from dlm_bench.sweeps.compose import compose_config

    def config(k):
        return config_dict(compose_config(["model=sggpm", "dataset=ucsdpeds1l", "sggpm.method=fp_sparse",
                                           f"sggpm.size_index={k}", f"results_dir={tmp_path}"]))

    sizes = [fit_size(config(k)) for k in (0, 1, 3)]
    assert sizes[0] < sizes[1] < sizes[2]
    for k, size in zip((0, 1), sizes):
        rec = config(k)
        if k == 0:
            del rec["sggpm"]["dual_upper_bound"]  # an older run.json: the key at its implicit value
        (tmp_path / f"r{k}").mkdir()
        (tmp_path / f"r{k}" / "run.json").write_text(json.dumps(
            {"status": "ok", "model": "sggpm", "config": rec, "train": {"wall_s": 2.0 * size**1.7}}))
    est = ce.estimate([(config(3), None)], tmp_path)
    assert est.from_sizes == 1 and est.unknown == 0
    assert est.seconds - ce.RUN_OVERHEAD_S == pytest.approx(2.0 * sizes[2] ** 1.7)
    assert "1 scaled from finished runs at other sizes (rough)" in est.line()
    other = config(3)
    other["sggpm"]["method"] = "grad_sparse"  # other settings: still no estimate
    assert ce.estimate([(other, None)], tmp_path).unknown == 1


@pytest.fixture
def round_costs(monkeypatch):
    """Round launch constants, so that the hand computations below read plainly."""
    monkeypatch.setattr(ce, "SWEEP_START_S", 5.0)
    monkeypatch.setattr(ce, "PLAN_POINT_S", 0.1)
    monkeypatch.setattr(ce, "LAUNCH", {"local": ce.LaunchCost(0.0, 0.5), "joblib": ce.LaunchCost(4.0, 1.0),
                                       "slurm": ce.LaunchCost(0.0, 6.0)})


def test_the_training_size_follows_the_protocols_own_train_frac(tmp_path):
    """n_train from protocol.train_frac, also under protocol=pac: pac_appF trains on 1/6 of its file (2000 of 12000);
    read as pac's default 0.8, its exact GP (M = n) was estimated at ~11 CPU hours a run instead of about a minute."""
    from omegaconf import OmegaConf

    from dlm_bench.sweeps.compose import compose_config

    data = tmp_path / "gp.csv"
    data.write_text("x0,y\n" + "".join(f"{i},{i}\n" for i in range(1200)))
    for overrides, want in ((["experiment=pac_appF"], 200), (["protocol=pac", "dataset=csv", "dataset.target=y"], 960)):
        cfg = compose_config([*overrides, f"dataset.path={data}"])
        assert ce.n_train(OmegaConf.to_container(cfg, resolve=True)) == want


def test_the_sweeps_wall_adds_its_start_plan_and_launches_and_divides_by_the_launchers_jobs(round_costs):
    """Hand computations of sweep_wall_seconds (issue 75: the walls measured were 1.4-2.2x the CPU estimate)."""
    units, points = [10.0, 20.0, 30.0], 5
    # local, idle machine: start 5 + plan 5 x 0.1, then every unit and 5 launches of 0.5, one after another
    assert ce.sweep_wall_seconds(units, points, "local", 1, load=0.0, cores=2) == pytest.approx(5.5 + 60 + 2.5)
    # joblib, 2 slots, 2 other processes on 2 cores: the plan gets 2 / 3 of a core, each slot 2 / 4; the work
    # (60 + 5 x 1 launches + 2 workers x 4 start = 73) over 2 slots = 36.5 (> the longest unit + launch + start 35)
    assert ce.sweep_wall_seconds(units, points, "joblib", 2, load=2.0, cores=2) == pytest.approx(5.5 * 1.5 + 36.5 * 2)
    # the longest unit bounds it: [100, 1] on 2 slots takes 100 + 1 + 4 = 105, not (101 + 2 + 8) / 2
    assert ce.sweep_wall_seconds([100.0, 1.0], 2, "joblib", 2) == pytest.approx(5.2 + 105)
    # more slots than jobs: one slot is used, and its worker starts once
    assert ce.sweep_wall_seconds([10.0], 1, "joblib", 2) == pytest.approx(5.1 + 10 + 1 + 4)
    # SLURM: 256 at a time on the cluster (no load factor there), the plan here at load 2 (2 / 3 of a core)
    assert ce.sweep_wall_seconds(units, points, "slurm", 256, load=2.0, cores=2) == pytest.approx(5.5 * 1.5 + 36)
    # batched groups whose members are consecutive train one after another: 2 of 30 s on 2 slots take 60 + 1 + 4
    assert ce.sweep_wall_seconds([30.0, 30.0], 2, "joblib", 2, groups=[30.0, 30.0]) == pytest.approx(5.2 + 65)
    # 3 other sessions (autogroup): the plan gets 2 / 4 of a core, and the 2 slots split that half: 1 / 4 each
    assert ce.sweep_wall_seconds(units, points, "joblib", 2, load=3.0, cores=2, grouped=True) == pytest.approx(
        5.5 * 2 + 36.5 * 4)


def test_a_slot_gets_its_share_of_the_cores_per_process_or_per_session(monkeypatch):
    """Per process: 7 others beside 1 sweep process on 2 cores give it a quarter of a core; 2 slots beside none, a
    core each. Per session (autogroup): 3 other sessions leave the sweep's session 2 / 4 of the machine, which its
    2 slots split: a quarter each; beside none, a core each."""
    assert ce.core_share(7.0, 2, 1) == pytest.approx(0.25) and ce.core_share(0.0, 2, 2) == 1.0
    assert ce.core_share(2.0, 2, 2) == pytest.approx(0.5)
    assert ce.core_share(3.0, 2, 2, grouped=True) == pytest.approx(0.25)
    assert ce.core_share(3.0, 2, 1, grouped=True) == pytest.approx(0.5)
    assert ce.core_share(0.0, 2, 2, grouped=True) == 1.0
    monkeypatch.setattr(ce.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(ce, "other_sessions_running", lambda: None)
    monkeypatch.setattr(ce.os, "getloadavg", lambda: (7.0, 0.4, 0.3))
    assert ce.this_load() == (7.0, 2, False)
    monkeypatch.setattr(ce, "other_sessions_running", lambda: 3.4)
    assert ce.this_load() == (3.4, 2, True)


def test_other_sessions_are_counted_from_proc():
    """On Linux with autogroup: a mean of SAMPLES whole counts of sessions, no more than there are processes."""
    auto = Path("/proc/sys/kernel/sched_autogroup_enabled")
    if not auto.is_file() or auto.read_text().strip() != "1":
        pytest.skip("no autogroup on this kernel: this_load uses the load average")
    try:  # a container may enable autogroup on the host yet hide /proc/self/autogroup (CI did)
        Path("/proc/self/autogroup").read_text().split()[0]
    except (OSError, IndexError):
        assert ce.other_sessions_running() is None  # the load average is used instead
        return
    n = ce.other_sessions_running()
    assert n is not None and 0 <= n <= len(list(Path("/proc").glob("[0-9]*")))
    assert n * ce.SAMPLES == pytest.approx(round(n * ce.SAMPLES))


def test_the_launcher_and_its_parallelism_come_from_the_points_config():
    assert ce.launcher_of({"launcher": {"name": "local"}}) == ("local", 1)
    assert ce.launcher_of({"launcher": {"name": "joblib", "n_jobs": 3}}) == ("joblib", 3)
    assert ce.launcher_of({"launcher": {"name": "slurm", "array_parallelism": 64}}) == ("slurm", 64)


def test_a_batched_beta_group_is_one_unit_per_seed_paying_the_overhead_once(tmp_path, archive, monkeypatch):
    """2 seeds x 3 betas of a batched full-batch grid are 2 groups (one job trains each): 2 units, each its 3
    members' seconds + RUN_OVERHEAD_S once. Before, the group key left out the seed, so the 6 members were taken
    for one group and paid RUN_OVERHEAD_S / 6 each."""
    monkeypatch.setattr(ce, "this_machine", lambda: ce.REFERENCE_PROBE_S)
    rec = next(r for _, r in archive if r["train"].get("batched") and ce.batched_point(r["config"]))
    points = []
    for seed in (0, 1):
        for k in (0, 1, 2):
            config = json.loads(json.dumps(rec["config"]))
            config["seed"], config["objective"]["beta_index"] = seed, k
            points.append((config, rec.get("likelihood")))
    est = ce.estimate(points, tmp_path)
    member = ce.modelled_seconds(points[0][0], rec["model"], rec.get("likelihood"), True)
    assert est.from_model == 6 and len(est.units) == 2
    assert est.units == pytest.approx([3 * member + ce.RUN_OVERHEAD_S] * 2)
    assert est.seconds == pytest.approx(6 * member + 2 * ce.RUN_OVERHEAD_S)
    assert est.per_point == pytest.approx([member + ce.RUN_OVERHEAD_S / 3] * 6)
    assert est.groups == est.units  # beta varies fastest here: a group's members are consecutive, so groups serialize
    interleaved = ce.estimate([points[i] for i in (0, 3, 1, 4, 2, 5)], tmp_path)  # seed varies fastest
    assert interleaved.groups == [] and interleaved.units == pytest.approx(est.units)


def test_unbatched_points_are_a_unit_each_and_the_plan_counts_every_grid_point_as_a_job(tmp_path, archive, monkeypatch):
    monkeypatch.setattr(ce, "this_machine", lambda: ce.REFERENCE_PROBE_S)
    rec = next(r for rep, r in archive if rep == "pac_table2" and r["model"] == "pac_sgp")
    points = [({**json.loads(json.dumps(rec["config"])), "seed": s}, "gaussian") for s in range(3)]
    est = ce.estimate(points, tmp_path)
    one = ce.modelled_seconds(points[0][0], "pac_sgp", "gaussian", False) + ce.RUN_OVERHEAD_S
    assert est.units == pytest.approx([one] * 3) and est.launcher == ("local", 1)
    est.grid_points, est.load = 10, (0.0, 2, False)  # 7 more grid points skipped (done): launched all the same
    assert est.wall_seconds() == pytest.approx(ce.sweep_wall_seconds([one] * 3, 10, "local", 1, 0.0, 2))
    assert est.wall_seconds() == pytest.approx(ce.SWEEP_START_S + 10 * (ce.PLAN_POINT_S + ce.LAUNCH["local"].job_s)
                                               + 3 * one)
