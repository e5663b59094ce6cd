"""Upstream's alternating optimisation (spec 3.2/3.4): blocks of variational ("mog"), kernel ("hyp"), likelihood ("ll")
parameters and inducing inputs ("inducing", upstream optimizer.py's fourth block), each a short L-BFGS run (or Adam
steps), up to max_iter global iterations.

Convergence, checked after each mog block as upstream does: mean|dm| + mean|d raw S| over 2 < xtol, or the ELBO rose by
less than ftol. The standard-normal samples are drawn once and reused (common random numbers: the optimiser sees a
fixed sample-average objective) unless resample=True (new samples before every block).

Checkpoints (training/checkpoint.py): with one given, the state at the end of a global iteration (the model's
parameters, each block's Adam state, the sample generator, the last ELBO, the curve, the time spent) is saved every
checkpoint.every_s seconds and when SIGTERM or a sweep's --time-limit arrives (held to the iteration's end,
util/interrupts.py); a rerun resumes there. L-BFGS needs nothing more: upstream starts a fresh one per block and
iteration. The samples are redrawn from the seed (and the generator restored after), so a resumed run ends with the
numbers of an uninterrupted one.
"""

from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch

from ..training.checkpoint import Checkpoint
from ..util import interrupts
from ..util.logline import Heartbeat
from .model import Savigp

BLOCKS = ("mog", "hyp", "ll", "inducing")


@dataclass
class FitResult:
    status: str = "ok"
    error: Optional[str] = None
    iterations: int = 0
    converged: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    final_elbo: Optional[float] = None
    curve: list = field(default_factory=list)


def block_params(model: Savigp, block: str):
    return {"mog": model.variational_parameters, "hyp": model.hyper_parameters, "ll": model.likelihood_parameters,
            "inducing": model.inducing_parameters}[block]()


@contextmanager
def grads_for(model: Savigp, params):
    """Autograd for one block's parameters only (switched on for them, off for the rest); every requires_grad flag is
    restored on exit.

    Why: the backward through K_xz to the kernel parameters and Z is wasted work outside the hyp and inducing blocks,
    and it dominates there: on MNIST (N = 60000, D = 784, M = 200, S = 200) one ELBO gradient takes 5.1 s with it and
    2.0 s without. The block's own gradients are unchanged. Z is built without a gradient (it is fixed unless the
    inducing block runs), so the block's parameters are switched on here, not only the others off."""
    keep = {id(p) for p in params}
    saved = [(p, p.requires_grad) for p in model.parameters()]
    try:
        for p, _ in saved:
            p.requires_grad_(id(p) in keep)
        yield
    finally:
        for p, flag in saved:
            p.requires_grad_(flag)


def _raw_variational(model: Savigp):
    raw_S = torch.cat([model.L_offdiag.flatten(), model.L_logdiag.flatten()]) if model.posterior == "fg" else model.log_s.flatten()
    return model.m.detach().clone(), raw_S.detach().clone()


def _run_block(params, block: str, n: int, optimizer: str, lr: float, adams: dict, objective) -> None:
    """n L-BFGS evaluations (a fresh L-BFGS per block and global iteration) or n Adam steps (Adam state kept per block)."""
    if optimizer == "lbfgs":
        opt = torch.optim.LBFGS(params, lr=1.0, max_iter=n, max_eval=n, line_search_fn="strong_wolfe",
                                tolerance_grad=1e-10, tolerance_change=1e-14, history_size=20)

        def closure():
            opt.zero_grad()
            loss = -objective()[1]
            loss.backward()
            return loss

        opt.step(closure)
    else:
        opt = adams.setdefault(block, torch.optim.Adam(params, lr=lr))
        for _ in range(n):
            opt.zero_grad()
            (-objective()[1]).backward()
            opt.step()


def fit(model: Savigp, X, y, *, num_samples: int, blocks=BLOCKS, evals: dict | None = None, max_iter: int = 200,
        optimizer: str = "lbfgs", lr: float = 0.01, xtol: float = 1e-3, ftol: float = 1e-5, resample: bool = False,
        seed: int = 12000, track: Callable[[], dict] | None = None, max_wall_s: float | None = None,
        heartbeat: Heartbeat | None = None, checkpoint: Checkpoint | None = None) -> FitResult:
    """blocks and optimizer were checked with the config (plugin.check_config, config/schema.py's domains).
    checkpoint: where the fit saves and resumes its state (None: neither)."""
    evals = {"mog": 25, "hyp": 25, "ll": 25, "inducing": 25, **(evals or {})}
    gen = torch.Generator(device=X.device).manual_seed(seed)
    eps = model.draw_eps(num_samples, X.shape[0], gen)
    adams = {}
    res = FitResult()
    t0, c0 = time.perf_counter(), time.process_time()
    if heartbeat is not None:
        heartbeat.start()

    chunk = model.points_per_block(num_samples)

    samples = {"eps": eps}  # the objective's samples (replaced before each block when resample)

    def objective():
        return model.elbo(X, y, samples["eps"], chunk)

    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None and not checkpoint.fits(model, saved.get("module")):
        saved = None
    if saved is not None:
        prev_elbo = _resume(saved, model, gen, adams, lr, res)
        t0, c0 = t0 - saved["wall_s"], c0 - saved["cpu_s"]
    else:
        with torch.no_grad():
            prev_elbo = objective()[0].item()
        res.curve.append({"iteration": 0, "wall_s": 0.0, "cpu_s": 0.0, "elbo": prev_elbo, **(track() if track else {})})
    try:
        with interrupts.deferred() if checkpoint is not None else nullcontext():
            if not _iterate(model, X, objective, samples, res, gen, adams, prev_elbo, blocks, evals, max_iter,
                            optimizer, lr, xtol, ftol, resample, num_samples, track, max_wall_s, heartbeat, checkpoint,
                            t0, c0):
                return res  # diverged: no final ELBO
    except (RuntimeError, ValueError) as err:  # e.g. a failed Cholesky: recorded, the sweep goes on
        res.status, res.error = "failed", f"{type(err).__name__}: {err}"
    return _finish(res, objective, t0, c0)


def _finish(res: FitResult, objective, t0: float, c0: float) -> FitResult:
    res.wall_s, res.cpu_s = time.perf_counter() - t0, time.process_time() - c0
    with torch.no_grad():
        res.final_elbo = objective()[0].item()
    return res


def _state(model: Savigp, gen, adams: dict, prev_elbo: float, res: FitResult, t0: float, c0: float) -> dict:
    return {"module": model.state_dict(), "adams": {b: o.state_dict() for b, o in adams.items()},
            "generator": gen.get_state(), "prev_elbo": prev_elbo, "iterations": res.iterations, "curve": res.curve,
            "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}


def _resume(saved: dict, model: Savigp, gen, adams: dict, lr: float, res: FitResult) -> float:
    """Load a checkpoint's state over the fresh fit's; returns the last ELBO (the convergence test's reference)."""
    model.load_state_dict(saved["module"])
    gen.set_state(saved["generator"])
    for block, state in saved["adams"].items():
        adams[block] = torch.optim.Adam(block_params(model, block), lr=lr)
        adams[block].load_state_dict(state)
    res.iterations, res.curve = saved["iterations"], list(saved["curve"])
    return saved["prev_elbo"]


def _iterate(model, X, objective, samples: dict, res, gen, adams, prev_elbo, blocks, evals, max_iter, optimizer, lr,
             xtol, ftol, resample, num_samples, track, max_wall_s, heartbeat, checkpoint, t0, c0) -> bool:
    """The global iterations from res.iterations + 1 on (samples["eps"]: the objective's sample array, redrawn
    before each block when resample); False when the ELBO became non-finite (res says where)."""
    for it in range(res.iterations + 1, max_iter + 1):
        stop = False
        for block in blocks:
            params = block_params(model, block)
            if not params:
                continue
            if resample:
                samples["eps"] = model.draw_eps(num_samples, X.shape[0], gen)
            before = _raw_variational(model)
            with grads_for(model, params):
                _run_block(params, block, evals[block], optimizer, lr, adams, objective)
            with torch.no_grad():
                elbo = objective()[0].item()
            if not torch.isfinite(torch.tensor(elbo)):
                res.status, res.error = "diverged", f"non-finite ELBO after the {block} block of iteration {it}"
                return False
            if block == "mog":
                m0, s0 = before
                m1, s1 = _raw_variational(model)
                dx = ((m1 - m0).abs().mean() + (s1 - s0).abs().mean()).item() / 2
                if dx < xtol or 0 < elbo - prev_elbo < ftol:
                    stop = True
                prev_elbo = elbo
        res.iterations = it
        row = {"iteration": it, "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "elbo": elbo}
        res.curve.append({**row, **(track() if track else {})})
        if heartbeat is not None:
            heartbeat.tick(it, max_iter, note=f" (SAVIGP, ELBO {elbo:.6g})")
        if stop:
            res.converged = True
            return True
        if max_wall_s is not None and row["wall_s"] > max_wall_s:
            return True
        if checkpoint is not None and it < max_iter and (checkpoint.due() or interrupts.pending()):
            checkpoint.save(_state(model, gen, adams, prev_elbo, res, t0, c0), it / max_iter)
        interrupts.deliver()  # a held SIGTERM / --time-limit acts here, after the checkpoint
    return True
