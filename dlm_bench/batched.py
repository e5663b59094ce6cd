"""Batched beta grid (issue 16 item 1): every beta of one (dataset, split, method, seed) trained in one model.

`objective.beta_batch=true` with `objective.beta_index=k`: the run trains the whole group -- the same
configuration at every beta index of the sweep (`hydra.sweeper.params["objective.beta_index"]`, else the full
grid [n, n/2, ... >= min_beta]) -- as ONE set of tensors with a leading batch dimension B (GPyTorch batch
shapes): per-member q(u) (variational mean [B, M], Cholesky [B, M, M]); for joint methods also per-member
kernel hyperparameters, Z [B, M, D] and noise; for fixed methods the stage-1 SVGP is trained once and its
kernel matrices (chol K_ZZ, A = L^-1 K_ZX) are shared by every member. The loss is the sum over members of
each member's own loss, so the gradient of member b's slice is member b's gradient, and Adam (elementwise)
makes exactly the unbatched update; members start from the unbatched run's initial state (same seed, same
RNG draws). Each step equals the unbatched step to rounding (batched kernels sum in another order); over
thousands of Adam steps a member whose training is chaotic (loss spikes) can drift from the unbatched run as a
run on another BLAS would. Each member keeps its own StoppingRule: after an iteration in which members stopped
(converged, max_iters or a non-finite loss, which keeps its state before the step) the batch shrinks to the
members still training, their state and Adam moments carried over; the batch ends when all have stopped.
Each member is then evaluated through the ordinary (unbatched) bundle and written as an ordinary run
directory with the run name the unbatched run has (`objective.beta_batch` is not part of run names), so
reports, resumption and later sweeps (batched or not) see no difference. run.json adds `train.batched: B`.

Supported: model=svgp, objective elbo (beta-ELBO) or dlm, Adam, full batch, no trainer.track_every; joint or
fixed hyperparameters; whitened or unwhitened strategy (the fixed fast path, FrozenPredictive, is whitened only:
unwhitened members take the ordinary model call, as unbatched); likelihoods: Gaussian (noise with batch_shape
[B]) with estimator=exact, or one without parameters (probit, logistic, poisson_exp, poisson_softplus: one
instance for all members, log p(y|f) broadcasts over B) with estimator=exact (closed form or quadrature, as
unbatched), quadrature or bmc. Other settings of these SVGP methods (Student-t, uPS, smooth-bMC, minibatches,
L-BFGS) raise a ConfigError; other models and objectives (sq_dlm, SGPR, FITC) and methods outside the beta grid
ignore the flag (so an experiment can set it for its whole method sweep).
bMC: the members' samples are drawn jointly (one [L, B, n] draw per step instead of B draws of [L, n]), so a
batched bMC member's trajectory equals the unbatched run's in distribution, not bit for bit (same seed, same
batched result; tests/integration/test_batched_nonconjugate.py).
A batch whose step fails as a whole (a Cholesky error) re-runs its unfinished members unbatched.

Locks: the group holds `<results>/<experiment>/.beta_batch/<run name of index 0>/.lock` (waited for) and the
ordinary per-run lock of each member it trains; members done already (ok / diverged, failed unless
resume.retry_failed; all with resume.force) or locked by another process are left out. A sweep job whose point
the lock's holder is training does not wait: it counts as skipped, so joblib / SLURM workers move on to the
next group.
"""

from __future__ import annotations

import copy
import math
import time
from contextlib import contextmanager
from pathlib import Path

import gpytorch
import numpy as np
import torch
from omegaconf import DictConfig

from .beta import beta_grid
from .errors import ConfigError
from .models.svgp import whitened_marginals

MAX_BATCH_ELEMENTS = 2e7  # B * M * n per batch (one [B, n, M] float64 tensor: 160 MB); larger groups are chunked
GROUP_DIR = ".beta_batch"


class RunningElsewhere(RuntimeError):
    """The member this run was asked for is locked by another process."""


def requested(cfg: DictConfig) -> bool:
    """beta_batch asked for, on a beta-grid point (after apply_beta_grid_flag), of an SVGP objective with a beta
    (elbo, dlm). Other models and objectives (sq_dlm, collapsed bounds) ignore the flag and run unbatched."""
    o = cfg.objective
    return (bool(o.get("beta_batch", False)) and o.beta_index is not None and o.name in ("elbo", "dlm")
            and cfg.model.name == "svgp")


BATCHED_ESTIMATORS = ("exact", "quadrature", "bmc")


def batchable_likelihood(name: str) -> bool:
    """Gaussian (its noise takes a batch_shape) or a likelihood without parameters (probit, logistic, Poisson):
    one instance serves every member, its elementwise log p(y|f) broadcasts over the batch dimension."""
    from .likelihoods import LIKELIHOODS

    return name == "gaussian" or not any(True for _ in LIKELIHOODS[name]().parameters())


def check_supported(cfg: DictConfig, n_train: int | None = None) -> None:
    """n_train: known once the data are loaded; a trainer.batch_size >= n_train is full batch (the presets' 6000)."""
    bs = cfg.trainer.batch_size
    full_batch = bs is None or n_train is None or bs >= n_train
    lik = cfg.model.get("likelihood") or "gaussian"
    estimator = cfg.estimator.name
    optimizer = getattr(cfg.trainer.optimizer, "value", cfg.trainer.optimizer)
    bad = [f"{k}={v}" for k, v, ok in (
        ("estimator.name", estimator, estimator in BATCHED_ESTIMATORS),
        ("model.likelihood", lik, batchable_likelihood(lik)),
        ("estimator.name", f"{estimator} with the Gaussian likelihood", lik != "gaussian" or estimator == "exact"),
        ("trainer.optimizer", optimizer, optimizer == "adam"),
        ("trainer.batch_size", bs, full_batch),
        ("trainer.track_every", cfg.trainer.track_every, not cfg.trainer.track_every),
        ("run_dir", cfg.run_dir, not cfg.run_dir),
    ) if not ok]
    if bad:
        raise ConfigError("objective.beta_batch=true supports estimator=exact|quadrature|bmc (Gaussian likelihood: "
                          "exact only), the Gaussian likelihood or one without parameters (probit, logistic, "
                          f"poisson_exp, poisson_softplus), Adam, full batch, no track_every, no run_dir; got "
                          f"{', '.join(bad)}")


INDICES_ENV = "DLM_BENCH_SWEEP_BETA_INDICES"


def announce_beta_indices(overrides: list[str]):
    """run_sweep: a command-line `objective.beta_index=<sweep>` is passed to the jobs (also joblib / SLURM
    workers) in an environment variable; returns the function that restores the environment."""
    import os

    old = os.environ.get(INDICES_ENV)
    values = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0].lstrip("+~") == "objective.beta_index"
              and "=" in o]
    if values:
        os.environ[INDICES_ENV] = values[-1]

    def restore():
        if old is None:
            os.environ.pop(INDICES_ENV, None)
        else:
            os.environ[INDICES_ENV] = old

    return restore


def sweep_beta_indices() -> list[int] | None:
    """The beta indices of the sweep this job belongs to: the command line's objective.beta_index sweep, else
    the experiment's hydra.sweeper.params; None outside a Hydra job (then the group is the full grid)."""
    import os

    try:
        from hydra.core.hydra_config import HydraConfig

        params = HydraConfig.get().sweeper.get("params") or {}
    except Exception:  # not inside a Hydra job
        return None
    value = os.environ.get(INDICES_ENV) or params.get("objective.beta_index")
    if value is None:
        return None
    from hydra.core.override_parser.overrides_parser import OverridesParser

    o = OverridesParser.create().parse_override(f"objective.beta_index={value}")
    return [int(v) for v in o.sweep_iterator()] if o.is_sweep_override() else [int(o.value())]


def member_config(cfg: DictConfig, k: int, n_train: int | None = None) -> DictConfig:
    m = copy.deepcopy(cfg)
    m.objective.beta_index = k
    if n_train is not None:
        m.objective.beta = n_train / 2**k
    return m


def group_lock_dir(cfg: DictConfig) -> Path:
    from .runner import run_name

    return Path(cfg.results_dir) / cfg.experiment / GROUP_DIR / run_name(member_config(cfg, 0))


_HELD: set[Path] = set()


@contextmanager
def group_lock(cfg: DictConfig, poll_s: float = 1.0, member: Path | None = None):
    """Hold the group's lock (re-entrant within a process); waits while another process holds it and yields
    True. With `member` (a run dir of the group) it stops waiting, and yields False, once the process holding
    the group lock also holds `member`'s run lock: that process is training `member` in its batch. A parallel
    launcher's other jobs of the group then free their worker at once instead of waiting out the group."""
    from .locks import RunLock, holder

    path = group_lock_dir(cfg)
    if path in _HELD:
        yield True
        return
    lock = RunLock(path)
    while not lock.acquire():
        if member is not None:
            trainer = holder(member)
            # pid -1: a lock file still being written (locks.holder); two such must not count as one holder
            if trainer is not None and trainer["pid"] != -1 and trainer == holder(path):
                yield False
                return
        time.sleep(poll_s)
    _HELD.add(path)
    try:
        yield True
    finally:
        _HELD.discard(path)
        lock.release()


def _done(run_dir: Path, resume) -> bool:
    from .sweep import _existing_status

    status = _existing_status(run_dir)
    if status is None or resume.force:
        return False
    return status in ("ok", "diverged") or (status == "failed" and not resume.retry_failed)


# ---------------------------------------------------------------------------------------------- batched model


def _batched_kernel(kernel, bs: torch.Size):
    if not isinstance(kernel, gpytorch.kernels.ScaleKernel):
        raise ConfigError(f"objective.beta_batch: unsupported kernel {type(kernel).__name__}")
    base = kernel.base_kernel
    kw = {"ard_num_dims": base.ard_num_dims, "batch_shape": bs}
    if isinstance(base, gpytorch.kernels.MaternKernel):
        kw["nu"] = base.nu
    return gpytorch.kernels.ScaleKernel(type(base)(**kw), batch_shape=bs)


def _batched_mean(mean, bs: torch.Size):
    return type(mean)(batch_shape=bs)


def spread(dst: torch.nn.Module, src: torch.nn.Module) -> None:
    """Every member of the batched module `dst` := the unbatched module `src` (same state-dict keys)."""
    state = src.state_dict()
    with torch.no_grad():
        for name, t in dst.state_dict().items():
            s = state[name].to(t.dtype)
            t.copy_(s if s.shape == t.shape else s.expand_as(t))


def gather(dst: torch.nn.Module, src: torch.nn.Module, b: int) -> None:
    """The unbatched module `dst` := member b of the batched module `src`."""
    state = src.state_dict()
    with torch.no_grad():
        for name, t in dst.state_dict().items():
            s = state[name]
            t.copy_(s if s.shape == t.shape else s[b])


class BatchedSVGP(gpytorch.models.ApproximateGP):
    """B copies of a template SVGP (models/svgp.py) as one GPyTorch model with batch_shape [B]."""

    def __init__(self, template, B: int):
        bs = torch.Size([B])
        ts = template.variational_strategy
        Z = ts.inducing_points.detach()
        q = gpytorch.variational.CholeskyVariationalDistribution(Z.shape[-2], batch_shape=bs)
        learn_Z = isinstance(ts.inducing_points, torch.nn.Parameter)
        strategy = type(ts)(self, Z.expand(B, *Z.shape).clone(), q, learn_inducing_locations=learn_Z)
        super().__init__(strategy)
        self.mean_module = _batched_mean(template.mean_module, bs)
        self.covar_module = _batched_kernel(template.covar_module, bs)

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


class BatchedBundle(torch.nn.Module):
    """The batched counterpart of an (initialised) SVGPBundle: loss(X, y) -> [B] member losses."""

    def __init__(self, template, betas: list[float], fixed: bool):
        super().__init__()
        B = len(betas)
        p = next(template.parameters())
        self.model = BatchedSVGP(template.model, B).to(device=p.device, dtype=p.dtype)
        lik = template.likelihood
        if isinstance(lik, gpytorch.likelihoods.GaussianLikelihood):
            self.likelihood = type(lik)(batch_shape=torch.Size([B])).to(device=p.device, dtype=p.dtype)
            spread(self.likelihood, lik)
        elif not any(True for _ in lik.parameters()):
            self.likelihood = copy.deepcopy(lik)
        else:
            raise ConfigError(f"objective.beta_batch=true: unsupported likelihood {type(lik).__name__}")
        spread(self.model, template.model)
        beta = torch.tensor(betas, dtype=p.dtype, device=p.device)
        self.mll = type(template.mll)(self.likelihood, self.model, num_data=template.mll.num_data, beta=beta,
                                      **template.mll_kwargs)
        self.B, self.betas, self.fixed = B, list(betas), fixed
        self.__dict__["template"] = template  # not a submodule: its parameters are not the batch's
        self.where: dict[int, tuple] = {}  # member -> (batch, slot) holding its final state (fit_batched)
        self._frozen_terms = None
        self.fast = False
        if fixed:
            for name, q in self.named_parameters():
                q.requires_grad_("_variational_distribution" in name)
            # the template's cached-kernel path (FrozenPredictive), shared by every member; it exists for the
            # whitened strategy only: unwhitened models (whiten=false) take the ordinary model call, as unbatched
            self.fast = template._frozen is not None and template.fast_fixed

    def _frozen_f(self, X):
        """FrozenPredictive.__call__ with a batched q(u): mean_X + A^T m_b, diag K_XX + jitter + colsum(A (S_b - I) A)."""
        if self._frozen_terms is None or self._frozen_terms[0] is not X:
            self._frozen_terms = (X, *self.template._frozen._prior_terms(X))
        _, mean, A, prior_var = self._frozen_terms
        strategy = self.model.variational_strategy
        strategy._clear_cache()
        return whitened_marginals(strategy, mean, A, prior_var)

    def loss(self, X, y):
        if self.fast and X.shape[-2] > self.template.num_inducing:
            return -self.mll(self._frozen_f(X), y)
        return -self.mll(self.model(X), y)

    def subset(self, slots: list[int]) -> "BatchedBundle":
        """A new batch of the members in `slots`, in their current state (the template and stage 1 shared)."""
        new = BatchedBundle(self.template, [self.betas[s] for s in slots], self.fixed)
        idx = torch.as_tensor(slots, device=self.mll.beta.device)
        shared = self.template.state_dict()
        state = self.state_dict()
        # entries with the template's shape are shared (buffers such as variational_params_initialized)
        new.load_state_dict({k: v if k in shared and shared[k].shape == v.shape else v[idx]
                             for k, v in state.items()})
        return new

    def gather(self, b: int) -> None:
        """Load member b into the template bundle (evaluated by the ordinary code path)."""
        src, slot = self.where.get(b, (self, b))
        gather(self.template.model, src.model, slot)
        gather(self.template.likelihood, src.likelihood, slot)
        self.template.train()  # as after Trainer.fit; eval-mode caches (chol K_ZZ, q(u)) belong to another member
        self.template.model.variational_strategy._clear_cache()


class BatchFailed(RuntimeError):
    pass


def fit_batched(bundle: BatchedBundle, X, y, trainer) -> list:
    """Trainer.fit (Adam, full batch) for every member at once, each with its own StoppingRule.
    After an iteration in which members stopped, the batch shrinks to the members still training (their state and
    Adam moments carried over), so a finished member costs nothing; bundle.where says where each member's final
    state is. Raises BatchFailed (with the partial results) when a step fails for the whole batch."""
    from linear_operator.utils.errors import NanError, NotPSDError

    from .train import StoppingRule, TrainResult

    B = bundle.B
    rules = [StoppingRule(trainer.window, trainer.tol) for _ in range(B)]
    scale = trainer.tol_scale(X.shape[0])  # full batch
    results = [TrainResult() for _ in range(B)]
    active = [True] * B
    members = list(range(B))  # the member in each slot of the current batch
    batch = bundle
    start = time.perf_counter()
    it = 0

    def trainable(batch):
        named = [(n, p) for n, p in batch.named_parameters() if p.requires_grad]
        assert all(p.shape[0] == batch.B for _, p in named), [p.shape for _, p in named]
        return named

    named = trainable(batch)
    params = [p for _, p in named]
    optimizer = torch.optim.Adam(params, lr=trainer.lr)

    def stop(slot, now):
        b = members[slot]
        active[b] = False
        stopped_mask[slot] = True
        results[b].wall_s = now
        results[b].epochs = results[b].iterations
        bundle.where[b] = (batch, slot)

    bundle.train()
    try:
        while any(active):
            stopped_mask = torch.zeros(batch.B, dtype=torch.bool, device=params[0].device)
            it += 1
            optimizer.zero_grad(set_to_none=True)
            losses = batch.loss(X, y)
            values = losses.detach().cpu().tolist()
            for slot, b in enumerate(members):
                results[b].iterations = it
                results[b].final_loss = values[slot]
                if not math.isfinite(values[slot]):
                    results[b].status = "diverged"
                    results[b].error = f"non-finite training loss ({values[slot]}) at iteration {it}"
                    stop(slot, time.perf_counter() - start)
            if not any(active):
                break
            diverged = stopped_mask.any()
            snapshot = [p.detach().clone() for p in params] if diverged else None
            losses[~stopped_mask].sum().backward()
            optimizer.step()
            if diverged:  # a diverged member keeps its state before the step (Adam's moments move it)
                with torch.no_grad():
                    for p, s in zip(params, snapshot):
                        p[stopped_mask] = s[stopped_mask]
            now = time.perf_counter() - start
            for slot, b in enumerate(members):
                if active[b]:
                    results[b].curve.append({"iteration": it, "wall_s": now, "loss": values[slot]})
                    if rules[b].update(values[slot] * scale):
                        results[b].converged = True
                        stop(slot, now)
                    elif it >= trainer.max_iters:
                        stop(slot, now)
            keep = [slot for slot, b in enumerate(members) if active[b]]
            if keep and len(keep) < batch.B:  # shrink the batch; the old one keeps the stopped members' states
                old_state = {n: optimizer.state[p] for n, p in named}
                idx = torch.as_tensor(keep, device=params[0].device)
                batch = batch.subset(keep)
                batch.train()
                members = [members[slot] for slot in keep]
                named = trainable(batch)
                params = [p for _, p in named]
                optimizer = torch.optim.Adam(params, lr=trainer.lr)
                for n, p in named:
                    optimizer.state[p] = {k: (v[idx] if v.dim() else v).clone() if torch.is_tensor(v) else v
                                          for k, v in old_state[n].items()}
    except (NotPSDError, NanError, torch.linalg.LinAlgError) as err:
        for slot, b in enumerate(members):  # the unfinished members' state is the current batch's
            bundle.where.setdefault(b, (batch, slot))
        raise BatchFailed(f"{type(err).__name__} at iteration {it}: {str(err).splitlines()[0]}", results, active)
    return results


# ---------------------------------------------------------------------------------------------- one group


def execute_batched(cfg: DictConfig):
    """runner.execute for objective.beta_batch=true: train the group, write every member, return member k's
    (record, run_dir). cfg: beta grid flag applied, beta_index set."""
    from .runner import check_config, resolve_task_defaults, run_dir_for
    from .validation import check_writable

    resolve_task_defaults(cfg)
    check_config(cfg)
    check_supported(cfg)
    check_writable(run_dir_for(cfg).parent)
    with group_lock(cfg):
        return _train_group(cfg)


def _train_group(cfg: DictConfig):
    from .beta import resolve_beta
    from .locks import RunLock
    from .runner import prepare_data, resolve_device, run_dir_for, seed_everything

    device = resolve_device(cfg.device.value)
    dtype = {"float32": torch.float32, "float64": torch.float64}[cfg.dtype.value]
    seed_everything(cfg.seed)
    prep = prepare_data(cfg, device, dtype)
    prep.rng_after = _get_rng()
    X, y = prep.tensors["train"]
    n = X.shape[0]
    check_supported(cfg, n)
    own = cfg.objective.beta_index
    cfg.objective.beta = resolve_beta(cfg.objective, n)  # OutsideBetaGrid for the own index, as unbatched
    size = len(beta_grid(n, cfg.objective.min_beta))
    wanted = sweep_beta_indices() or range(size)
    indices = sorted({k for k in wanted if 0 <= k < size} | {own})

    members, locks = [], []  # (k, cfg, run_dir)
    try:
        for k in indices:
            mcfg = member_config(cfg, k, n)
            run_dir = run_dir_for(mcfg)
            if k != own and _done(run_dir, cfg.resume):
                continue
            lock = RunLock(run_dir)
            if not lock.acquire():
                if k == own:
                    raise RunningElsewhere(f"{run_dir} is locked by another process")
                continue
            locks.append(lock)
            members.append((k, mcfg, run_dir))
        out = {}
        per_chunk = max(1, int(MAX_BATCH_ELEMENTS // max(1, n * cfg.model.num_inducing)))
        for i in range(0, len(members), per_chunk):
            out.update(_train_members(cfg, members[i:i + per_chunk], prep, device, dtype))
        return out[own]
    finally:
        for lock in locks:
            lock.release()


def _train_members(cfg, members, prep, device, dtype) -> dict:
    """Train `members` [(k, cfg, run_dir)] in one batch; write each run directory; {k: (record, run_dir)}."""
    from . import methods
    from .config import Hyperparameters
    from .runner import execute
    from .threads import apply_threads
    from .train import Trainer, TrainResult

    X, y = prep.tensors["train"]
    n, B = X.shape[0], len(members)
    _set_rng(prep.rng_after)  # as runner.execute builds its bundle: seeded, then the data prepared
    template = methods.build_bundle(members[0][1], X, y).to(device=device, dtype=dtype)
    apply_threads(n * B, template.num_inducing, None)
    fixed = cfg.objective.hyperparameters is Hyperparameters.fixed
    trainer = Trainer.from_config(cfg.trainer, seed=cfg.seed)
    start = time.perf_counter()
    pretrain, pretrain_info = None, {}
    results = None
    if fixed:  # stage 1 once for the whole group (and stored for every later group with the same key)
        from .pretrain import PretrainStore

        pretrain, pretrain_info = methods.pretrain_and_freeze(cfg, template, X, y, trainer, device, dtype,
                                                              store=PretrainStore(cfg.results_dir))
        if pretrain.status != "ok":
            stage1 = pretrain_info["pretrain_model"].upper()
            results = [TrainResult(status=pretrain.status, error=f"{stage1} pretraining: {pretrain.error}")
                       for _ in members]
    out = {}
    if results is None:
        template.train()
        strategy = template.model.variational_strategy  # q(u) initialised as on the first training call
        if not strategy.variational_params_initialized.item():
            strategy._variational_distribution.initialize_variational_distribution(strategy.prior_distribution)
            strategy.variational_params_initialized.fill_(1)
        batch = BatchedBundle(template, [float(m[1].objective.beta) for m in members], fixed)
        try:
            results = fit_batched(batch, X, y, trainer)
        except BatchFailed as err:  # unfinished members: the ordinary unbatched run
            results, active = err.args[1], err.args[2]
            for b, (k, mcfg, run_dir) in enumerate(members):
                if active[b]:
                    plain = copy.deepcopy(mcfg)
                    plain.objective.beta_batch = False
                    out[k] = execute(plain)
    else:
        batch = None
    batch_wall = time.perf_counter() - start
    for b, (k, mcfg, run_dir) in enumerate(members):
        if k in out:
            continue
        if batch is not None and results[b].status == "ok":
            batch.gather(b)
        out[k] = _write_member(mcfg, prep, template, results[b], pretrain, run_dir, device, B, batch_wall,
                               pretrain_info)
        if len(members) > 1:
            _announce(out[k])
    return out


def _get_rng():
    import random

    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    return random.getstate(), np.random.get_state(), torch.get_rng_state(), cuda


def _set_rng(state) -> None:
    import random

    random.setstate(state[0])
    np.random.set_state(state[1])
    torch.set_rng_state(state[2])
    if state[3] is not None:
        torch.cuda.set_rng_state_all(state[3])


def _announce(result) -> None:
    from .sweep import _progress

    record, run_dir = result
    _progress(run_dir, f"{record.status} (batched)", record.metrics, record.train.get("wall_s"))


def _write_member(cfg, prep, bundle, result, pretrain, run_dir, device, B, batch_wall, pretrain_info=None):
    """The run.json + curve.csv runner.execute writes for this member (same fields; train.batched added)."""
    import traceback

    from .evaluation import predictive_metrics
    from .results import write_curve_csv, write_run_json
    from .runner import new_record, train_record

    record = new_record(cfg, prep, bundle)
    record.status, record.error = result.status, result.error
    try:
        if result.status == "ok":
            y_scale = float(np.asarray(prep.split.y_stats.std).reshape(-1)[0])
            metrics = {}
            for part in ("val", "test"):
                metrics.update(predictive_metrics(bundle, *prep.tensors[part], y_scale, part))
            if bundle.noise is not None:
                metrics["noise_var"] = bundle.noise.item()
            record.metrics = metrics
            if not all(np.isfinite(v) for v in metrics.values()):
                record.status, record.error = "diverged", "non-finite evaluation metric"
    except Exception as err:
        record.status = "failed"
        record.error = f"{type(err).__name__}: {err}"
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "traceback.txt").write_text(traceback.format_exc())
    # both stages: the batch clock starts before stage 1
    record.train = train_record(cfg, result, device, pretrain, pretrain_info, batch_wall)
    record.train.update(batched=B, batch_wall_s=batch_wall)
    write_curve_csv(run_dir, result.curve)
    write_run_json(run_dir, record)
    return record, run_dir


# ---------------------------------------------------------------------------------------------- sweep job


def sweep_group_job(cfg: DictConfig, run_dir: Path) -> str:
    """sweep_job for a beta_batch grid point: wait for the group lock, then train the group unless the point
    was finished meanwhile (by the job that held the lock). Returns at once ("skipped") when the lock's holder
    is training this point."""
    import signal
    import threading

    from .beta import OutsideBetaGrid
    from .runner import execute
    from .sweep import _progress, _raise_terminated, failed_job, point_state

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)
    with group_lock(cfg, member=run_dir) as held:
        # not held: the group's job (another worker or sweep) is training this point; like the group's
        # members that a one-at-a-time launcher finds done, it counts as skipped
        if not held or point_state(cfg)[0] in ("done", "failed"):
            return "skipped"
        try:
            record, _ = execute(cfg)
            _progress(run_dir, record.status, record.metrics, record.train.get("wall_s"))
            return record.status
        except RunningElsewhere:
            _progress(run_dir, "running elsewhere", {}, None)
            return "running_elsewhere"
        except OutsideBetaGrid:
            return "outside_grid"
        except Exception as err:  # config/data errors of this grid point: recorded, the sweep goes on
            return failed_job(cfg, run_dir, err)
