"""B copies of an SVGP trained as one GPyTorch model with batch_shape [B] (the batched beta grid; the harness side,
which members a group trains and how they are written, is dlm_bench/run/batched.py).

Per-member q(u) (variational mean [B, M], Cholesky [B, M, M]); for joint methods also per-member kernel
hyperparameters, Z [B, M, D] and noise; for fixed methods the stage-1 SVGP's kernel matrices (chol K_ZZ,
A = L^-1 K_ZX) are shared by every member. The loss is the sum over members of each member's own loss, so the
gradient of member b's slice is member b's gradient, and Adam (elementwise) makes exactly the unbatched update.
Each member keeps its own StoppingRule; after an iteration in which members stopped the batch shrinks to the
members still training, their state and Adam moments carried over.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import time

import gpytorch
import torch
from linear_operator.utils.errors import NanError, NotPSDError

from ..errors import ConfigError
from ..likelihoods import LIKELIHOODS
from ..training import gpytorch_internals
from ..training.checkpoint import rng_state, set_rng_state
from ..training.trainer import StoppingRule, TrainResult
from ..util import interrupts
from . import fast_svgp
from .batched_unwhitened import FusedKLUnwhitenedStrategy, fused_unwhitened_predictive, supports_fused


def batchable_likelihood(name: str) -> bool:
    """Gaussian (its noise takes a batch_shape) or a likelihood without parameters (probit, logistic, Poisson):
    one instance serves every member, its elementwise log p(y|f) broadcasts over the batch dimension."""
    return name == "gaussian" or not any(True for _ in LIKELIHOODS[name]().parameters())


def _batched_kernel(kernel, bs: torch.Size):
    if not isinstance(kernel, gpytorch.kernels.ScaleKernel):
        raise ConfigError(f"objective.beta_batch: unsupported kernel {type(kernel).__name__}")
    base = kernel.base_kernel
    kw = {"ard_num_dims": base.ard_num_dims, "batch_shape": bs}
    if isinstance(base, gpytorch.kernels.MaternKernel):
        kw["nu"] = base.nu
    return gpytorch.kernels.ScaleKernel(type(base)(**kw), batch_shape=bs)


def copy_state(dst: torch.nn.Module, src: torch.nn.Module, b: int | None = None) -> None:
    """b None: every member of the batched module `dst` := the unbatched module `src`; else the unbatched `dst` :=
    member b of the batched `src` (same state-dict keys; entries of the same shape are copied as they are)."""
    state = src.state_dict()
    with torch.no_grad():
        for name, t in dst.state_dict().items():
            s = state[name].to(t.dtype)
            t.copy_(s if s.shape == t.shape else s.expand_as(t) if b is None else s[b])


class BatchedSVGP(gpytorch.models.ApproximateGP):
    """B copies of a template SVGP (models/svgp.py) as one GPyTorch model with batch_shape [B]."""

    def __init__(self, template, B: int):
        bs = torch.Size([B])
        ts = template.variational_strategy
        Z = ts.inducing_points.detach()
        q = gpytorch.variational.CholeskyVariationalDistribution(Z.shape[-2], batch_shape=bs)
        learn_Z = isinstance(ts.inducing_points, torch.nn.Parameter)
        # unwhitened: the same strategy with a KL the fused q(f) can hand over (models/batched_unwhitened.py)
        cls = FusedKLUnwhitenedStrategy if type(ts) is gpytorch.variational.UnwhitenedVariationalStrategy else type(ts)
        strategy = cls(self, Z.expand(B, *Z.shape).clone(), q, learn_inducing_locations=learn_Z)
        super().__init__(strategy)
        self.mean_module = type(template.mean_module)(batch_shape=bs)
        self.covar_module = _batched_kernel(template.covar_module, bs)

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


class BatchedBundle(torch.nn.Module):
    """The batched counterpart of an (initialised) SVGPBundle: loss(X, y) -> [B] member losses."""

    # unwhitened members: q(f) and the KL fused, without the linear_operator layer (models/batched_unwhitened.py;
    # False: GPyTorch's UnwhitenedVariationalStrategy call every step)
    fused_unwhitened = True

    def __init__(self, template, betas: list[float], fixed: bool):
        super().__init__()
        B = len(betas)
        p = next(template.parameters())
        self.model = BatchedSVGP(template.model, B).to(device=p.device, dtype=p.dtype)
        lik = template.likelihood
        if isinstance(lik, gpytorch.likelihoods.GaussianLikelihood):
            self.likelihood = type(lik)(batch_shape=torch.Size([B])).to(device=p.device, dtype=p.dtype)
            copy_state(self.likelihood, lik)
        elif not any(True for _ in lik.parameters()):
            self.likelihood = copy.deepcopy(lik)
        else:
            raise ConfigError(f"objective.beta_batch=true: unsupported likelihood {type(lik).__name__}")
        copy_state(self.model, template.model)
        beta = torch.tensor(betas, dtype=p.dtype, device=p.device)
        self.mll = type(template.mll)(self.likelihood, self.model, num_data=template.mll.num_data, beta=beta,
                                      **template.mll_kwargs)
        self.B, self.betas, self.fixed = B, list(betas), fixed
        self.__dict__["template"] = template  # not a submodule: its parameters are not the batch's
        self.where: dict[int, tuple] = {}  # member -> (batch, slot) holding its final state (fit_batched)
        self.fast = False
        self.fused = self.fused_unwhitened and supports_fused(self.model)
        if fixed:
            for name, q in self.named_parameters():
                q.requires_grad_(gpytorch_internals.is_q_u_entry(name))
            # the template's cached-kernel path (FrozenPredictive), shared by every member; it exists for the
            # whitened strategy only: unwhitened models (whiten=false) take the ordinary model call, as unbatched
            self.fast = template._frozen is not None and template.fast_fixed

    def loss(self, X, y):
        if self.fast and X.shape[-2] > self.template.num_inducing:
            # the template's FrozenPredictive with the members' q(u): mean_X + A^T m_b, prior var + colsum(A (S_b - I) A)
            return -self.mll(self.template._frozen(X, self.model.variational_strategy), y)
        if (self.fused and self.training and X.dim() == 2 and X.shape[-2] != self.template.num_inducing
                and bool(self.model.variational_strategy.variational_params_initialized)):
            try:
                return -self.mll(fused_unwhitened_predictive(self.model, X), y)
            finally:  # the KL belongs to this evaluation only (taken by the MLL, or dropped if it raised)
                self.model.variational_strategy._fused_kl = None
        if getattr(self.template, "fast_joint", False) and self.training and fast_svgp.worth_blocking(self.model, X):
            # whitened joint members: q(f) over blocks of the inputs, as unbatched (models/fast_svgp.py)
            return -self.mll(fast_svgp.blocked_whitened_predictive(self.model, X), y)
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
        copy_state(self.template.model, src.model, slot)
        copy_state(self.template.likelihood, src.likelihood, slot)
        self.template.train()  # as after Trainer.fit; eval-mode caches (chol K_ZZ, q(u)) belong to another member
        gpytorch_internals.clear_cache(self.template.model.variational_strategy)


class BatchFailed(RuntimeError):
    pass


def fit_batched(bundle: BatchedBundle, X, y, trainer) -> list:
    """Trainer.fit (Adam, full batch) for every member at once, each with its own StoppingRule, the batch shrinking
    as members stop (module docstring), so a finished member costs nothing; bundle.where says where each member's
    final state is. Raises BatchFailed (with the partial results) when a step fails for the whole batch."""
    run = _BatchedTraining(bundle, trainer, scale=trainer.tol_scale(X.shape[0]))  # full batch
    bundle.train()
    ckpt = getattr(trainer, "checkpoint", None)  # the group's (run/batched.py; training/checkpoint.py)
    ckpt = ckpt if ckpt is not None and ckpt.enabled else None
    if ckpt is not None:
        saved = ckpt.load()
        run.restore(saved if saved is not None and all(
            ckpt.fits(bundle if b["root"] else BatchedBundle(bundle.template, b["betas"], bundle.fixed), b["state"])
            for b in saved.get("batches", [])) else None)
    if trainer.heartbeat is not None:
        trainer.heartbeat.start()
    try:
        with interrupts.deferred() if ckpt is not None else contextlib.nullcontext():
            while any(run.active):
                values = run.losses_then_step(X, y)
                if values is None:  # every member stopped (diverged) at this iteration
                    break
                run.record(values)
                run.shrink()
                if ckpt is not None and any(run.active) and (ckpt.due() or interrupts.pending()):
                    ckpt.save(run.state(), run.it / trainer.max_iters)  # every member's cap
                interrupts.deliver()  # a held SIGTERM / SLURM warning acts here, after the checkpoint
    except (NotPSDError, NanError, torch.linalg.LinAlgError) as err:
        for slot, b in enumerate(run.members):  # the unfinished members' state is the current batch's
            bundle.where.setdefault(b, (run.batch, slot))
        raise BatchFailed(f"{type(err).__name__} at iteration {run.it}: {str(err).splitlines()[0]}", run.results,
                          run.active)
    return run.results


class _BatchedTraining:
    """fit_batched's state: the current batch (a subset of the bundle's members after some stopped), which member
    sits in each of its slots, the members' results and stopping rules, and Adam over the batch's parameters."""

    def __init__(self, bundle: BatchedBundle, trainer, scale: float):
        self.bundle, self.trainer, self.scale = bundle, trainer, scale
        B = bundle.B
        self.rules = [StoppingRule(trainer.window, trainer.tol) for _ in range(B)]
        self.results = [TrainResult() for _ in range(B)]
        self.active = [True] * B
        self.members = list(range(B))  # the member in each slot of the current batch
        self.start = time.perf_counter()
        self.it = 0
        self._use(bundle)
        self.optimizer = torch.optim.Adam(self.params, lr=trainer.lr)

    def state(self) -> dict:
        """A checkpoint at the end of an iteration: every batch that holds a member's state (the current one and
        the older ones the stopped members' final states sit in, bundle.where), which member is in which slot,
        the members' results and stopping windows, Adam's state, the RNGs and the training time so far."""
        batches, ids = [], {}

        def ref(batch) -> int:
            if id(batch) not in ids:
                ids[id(batch)] = len(batches)
                batches.append({"betas": list(batch.betas), "state": batch.state_dict(), "root": batch is self.bundle})
            return ids[id(batch)]

        current = ref(self.batch)
        where = {b: (ref(batch), slot) for b, (batch, slot) in self.bundle.where.items()}
        return {"batches": batches, "current": current, "where": where, "members": list(self.members),
                "active": list(self.active), "it": self.it, "results": [dataclasses.asdict(r) for r in self.results],
                "rules": [list(r.recent) for r in self.rules], "optimizer": self.optimizer.state_dict(),
                "rng": rng_state(), "elapsed": time.perf_counter() - self.start}

    def restore(self, state: dict | None) -> None:
        """Continue from `state()` (None: nothing saved): the batches rebuilt from the template, then the RNGs."""
        if state is None:
            return
        built = []
        for saved in state["batches"]:
            batch = self.bundle if saved["root"] else BatchedBundle(self.bundle.template, saved["betas"],
                                                                    self.bundle.fixed)
            batch.load_state_dict(saved["state"])
            built.append(batch)
        self.bundle.where = {b: (built[i], slot) for b, (i, slot) in state["where"].items()}
        self.members, self.active, self.it = list(state["members"]), list(state["active"]), state["it"]
        self.results = [TrainResult(**r) for r in state["results"]]
        for rule, recent in zip(self.rules, state["rules"]):
            rule.recent.extend(recent)
        for b, r in enumerate(self.results):
            if self.active[b]:
                r.resumed_at = [*r.resumed_at, self.it]
        batch = built[state["current"]]
        batch.train()
        self._use(batch)
        self.optimizer = torch.optim.Adam(self.params, lr=self.trainer.lr)
        self.optimizer.load_state_dict(state["optimizer"])
        set_rng_state(state["rng"])
        self.start = time.perf_counter() - state["elapsed"]

    def _use(self, batch) -> None:
        self.batch = batch
        self.named = [(n, p) for n, p in batch.named_parameters() if p.requires_grad]
        assert all(p.shape[0] == batch.B for _, p in self.named), [p.shape for _, p in self.named]
        self.params = [p for _, p in self.named]

    def _stop(self, slot: int, now: float) -> None:
        b = self.members[slot]
        self.active[b] = False
        self.stopped_mask[slot] = True
        self.results[b].wall_s = now
        self.results[b].epochs = self.results[b].iterations
        self.bundle.where[b] = (self.batch, slot)

    def losses_then_step(self, X, y) -> list[float] | None:
        """The members' losses at the current state, then one Adam step for those with a finite loss (a diverged
        member stops and keeps its state before the step: Adam's moments would move it). None: none is left."""
        self.stopped_mask = torch.zeros(self.batch.B, dtype=torch.bool, device=self.params[0].device)
        self.it += 1
        self.optimizer.zero_grad(set_to_none=True)
        losses = self.batch.loss(X, y)
        values = losses.detach().cpu().tolist()
        for slot, b in enumerate(self.members):
            self.results[b].iterations = self.it
            self.results[b].final_loss = values[slot]
            if not math.isfinite(values[slot]):
                self.results[b].status = "diverged"
                self.results[b].error = f"non-finite training loss ({values[slot]}) at iteration {self.it}"
                self._stop(slot, time.perf_counter() - self.start)
        if not any(self.active):
            return None
        diverged = self.stopped_mask.any()
        snapshot = [p.detach().clone() for p in self.params] if diverged else None
        losses[~self.stopped_mask].sum().backward()
        self.optimizer.step()
        if diverged:
            with torch.no_grad():
                for p, s in zip(self.params, snapshot):
                    p[self.stopped_mask] = s[self.stopped_mask]
        return values

    def record(self, values: list[float]) -> None:
        """The iteration's curve rows, the heartbeat, and each active member's stopping rule and iteration cap."""
        now = time.perf_counter() - self.start
        trainer = self.trainer
        if trainer.heartbeat is not None:
            trainer.heartbeat.tick(self.it, trainer.max_iters, note=f" ({sum(self.active)} of {self.bundle.B} betas, batched)")
        for slot, b in enumerate(self.members):
            if self.active[b]:
                self.results[b].curve.append({"iteration": self.it, "wall_s": now, "loss": values[slot]})
                if self.rules[b].update(values[slot] * self.scale):
                    self.results[b].converged = True
                    self._stop(slot, now)
                elif self.it >= trainer.max_iters:
                    self._stop(slot, now)

    def shrink(self) -> None:
        """After members stopped: a batch of the members still training, with their Adam moments; the old batch
        keeps the stopped members' states (bundle.where points there)."""
        keep = [slot for slot, b in enumerate(self.members) if self.active[b]]
        if not keep or len(keep) == self.batch.B:
            return
        old_state = {n: self.optimizer.state[p] for n, p in self.named}
        idx = torch.as_tensor(keep, device=self.params[0].device)
        batch = self.batch.subset(keep)
        batch.train()
        self.members = [self.members[slot] for slot in keep]
        self._use(batch)
        self.optimizer = torch.optim.Adam(self.params, lr=self.trainer.lr)
        for n, p in self.named:
            self.optimizer.state[p] = {k: (v[idx] if v.dim() else v).clone() if torch.is_tensor(v) else v
                                       for k, v in old_state[n].items()}
