"""Trainer: Adam, full batch or minibatches, the DLM paper's stopping rule, NaN guard, progress."""

from __future__ import annotations

import math
import sys
import time
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass, field

import torch
from linear_operator.utils.errors import NanError, NotPSDError
from tqdm.auto import tqdm

from ..util import interrupts
from ..util.logline import Heartbeat
from .checkpoint import Checkpoint, rng_state, set_rng_state


class StoppingRule:
    """Converged when max - min of the loss over the last `window` values is <= `tol`
    (Wei et al. 2021, supplement: I = 50 for regression, 20 otherwise; tol = 1e-4)."""

    def __init__(self, window: int = 50, tol: float = 1e-4):
        if window < 1:
            raise ValueError(f"trainer.window must be >= 1, got {window}")
        self.window, self.tol = window, tol
        self.recent: deque[float] = deque(maxlen=window)

    def update(self, loss: float) -> bool:
        self.recent.append(loss)
        return len(self.recent) == self.window and max(self.recent) - min(self.recent) <= self.tol

    def first_stop(self, losses) -> int | None:
        """The 1-based iteration at which this rule would have stopped a run whose per-iteration losses (as the
        rule sees them: scaled for tol_on=sum) are `losses`, or None if it never fires. Full-batch Adam is
        deterministic, so this replays an early stop on the curve of a longer run (scripts/replay_stopping_rule.py)."""
        for i, loss in enumerate(losses, start=1):
            if self.update(float(loss)):
                return i
        return None


@dataclass
class TrainResult:
    status: str = "ok"  # ok | diverged
    error: str | None = None
    iterations: int = 0
    epochs: int = 0
    converged: bool = False
    wall_s: float = 0.0
    final_loss: float = float("nan")
    curve: list[dict] = field(default_factory=list)  # one row per iteration: iteration, wall_s, loss
    resumed_at: list[int] = field(default_factory=list)  # iterations at which a checkpoint was resumed


class Trainer:
    def __init__(
        self,
        lr: float = 0.1,
        max_iters: int = 5000,
        window: int = 50,
        tol: float = 1e-4,
        batch_size: int | None = None,
        epochs: int | None = None,
        progress: bool | None = None,
        optimizer: str = "adam",
        seed: int = 0,
        tol_on: str = "mean",
        stochastic_lr: float | None = None,
        heartbeat: Heartbeat | None = None,
        checkpoint_every_s: float = 0.0,
    ):
        if optimizer not in ("adam", "lbfgs"):
            raise ValueError(f"trainer.optimizer must be 'adam' or 'lbfgs', got {optimizer!r}")
        if optimizer == "lbfgs" and batch_size is not None:
            raise ValueError("trainer.optimizer=lbfgs is full batch only; use trainer.batch_size=null")
        if max_iters < 1:
            raise ValueError(f"trainer.max_iters must be >= 1, got {max_iters}")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"trainer.batch_size must be >= 1 or null, got {batch_size}")
        if lr <= 0:
            raise ValueError(f"trainer.lr must be > 0, got {lr}")
        if tol_on not in ("mean", "sum"):
            raise ValueError(f"trainer.tol_on must be 'mean' or 'sum', got {tol_on!r}")
        if stochastic_lr is not None and stochastic_lr <= 0:
            raise ValueError(f"trainer.stochastic_lr must be > 0 or null, got {stochastic_lr}")
        if checkpoint_every_s is None or checkpoint_every_s < 0:
            raise ValueError(f"trainer.checkpoint_every_s must be >= 0 (0: off), got {checkpoint_every_s}")
        self.tol_on, self.stochastic_lr = tol_on, stochastic_lr
        self.checkpoint_every_s = float(checkpoint_every_s)
        self.checkpoint: Checkpoint | None = None  # set by the harness (checkpoint_to): where this run's goes
        self.optimizer = optimizer
        self.lr, self.max_iters, self.window, self.tol = lr, max_iters, window, tol
        self.batch_size, self.epochs, self.seed = batch_size, epochs, seed
        self.heartbeat = heartbeat
        self.progress = sys.stderr.isatty() if progress is None else progress
        StoppingRule(window, tol)  # validates

    def checkpoint_to(self, path, identity: dict | None = None) -> "Trainer":
        """Checkpoint fits to `path` every checkpoint_every_s (training/checkpoint.py), marked with the run's
        `identity` (a checkpoint of another run is not resumed); returns self."""
        self.checkpoint = Checkpoint(path, self.checkpoint_every_s, identity)
        return self

    @classmethod
    def from_config(cls, trainer_cfg, seed: int = 0) -> "Trainer":
        mode = trainer_cfg.progress.value
        progress = {"auto": None, "on": True, "off": False, "lines": False}[mode]
        return cls(
            lr=trainer_cfg.lr,
            max_iters=trainer_cfg.max_iters,
            window=trainer_cfg.window,
            tol=trainer_cfg.tol,
            batch_size=trainer_cfg.batch_size,
            epochs=trainer_cfg.epochs,
            progress=progress,
            optimizer=getattr(trainer_cfg.optimizer, "value", trainer_cfg.optimizer),
            seed=seed,
            tol_on=trainer_cfg.get("tol_on", "mean"),
            stochastic_lr=trainer_cfg.get("stochastic_lr"),
            heartbeat=Heartbeat.for_progress(mode),
            checkpoint_every_s=trainer_cfg.get("checkpoint_every_s", 0.0),
        )

    @staticmethod
    def _lbfgs_step(optimizer, loss_fn, X, y) -> float:
        """One L-BFGS iteration; returns the loss before it (like the Adam loop), so a non-finite or failing
        start still marks the run diverged. A trial point of the line search where the loss is non-finite or
        a Cholesky fails counts as a very large loss (the search backtracks) instead of ending the run."""
        first: list[float] = []

        def closure():
            optimizer.zero_grad(set_to_none=True)
            try:
                loss = loss_fn(X, y)
            except (NotPSDError, NanError, torch.linalg.LinAlgError):
                if not first:
                    raise
                return torch.tensor(1e10, dtype=torch.float64)
            if not first:
                first.append(loss.item())
            if not torch.isfinite(loss):
                return torch.tensor(1e10, dtype=torch.float64)
            loss.backward()
            return loss

        optimizer.step(closure)
        return first[0]

    def tol_scale(self, n: int) -> float:
        """What the stopping rule multiplies the mean loss by: tol_on=sum sees the loss x N (the summed loss of
        upstream's regression code). Used by Trainer.fit and the batched grid (batched.fit_batched)."""
        return float(n) if self.tol_on == "sum" else 1.0

    def fit(self, loss_fn, params, X: torch.Tensor, y: torch.Tensor, track=None, track_every: int | None = None,
            module: torch.nn.Module | None = None) -> TrainResult:
        """Minimise loss_fn(X_batch, y_batch) over `params` with Adam or L-BFGS (modules in train mode).

        track: optional callable() -> dict of metrics, called at iteration 1 and every `track_every`
        iterations (and at the last one); its values are added to that iteration's curve row.
        module: the nn.Module holding `params` (the bundle): with self.checkpoint set, its state, the optimizer's,
        the RNGs and the loop's bookkeeping are saved at iteration (minibatch: epoch) ends every
        checkpoint_every_s and on SIGTERM, and a saved checkpoint is resumed (training/checkpoint.py).
        """
        params = [p for p in params if p.requires_grad]
        n = X.shape[0]
        full_batch = self.batch_size is None or self.batch_size >= n
        optimizer = self._make_optimizer(params, self.lr if full_batch or self.stochastic_lr is None else self.stochastic_lr)
        scale = self.tol_scale(n)
        # Minibatch mode: the rule is applied to each epoch's mean loss (minibatch losses are noisy).
        rule = StoppingRule(self.window, self.tol)
        result = TrainResult()
        gen = torch.Generator(device="cpu").manual_seed(self.seed)
        ckpt = self.checkpoint if module is not None and self.checkpoint is not None and self.checkpoint.enabled else None
        elapsed = self._resume(ckpt, module, optimizer, gen, rule, result) if ckpt is not None else 0.0
        bar = tqdm(total=self.max_iters, initial=result.iterations, disable=not self.progress, leave=False,
                   desc="train", unit="it")
        if self.heartbeat is not None:
            self.heartbeat.start()
        start = time.perf_counter() - elapsed  # a resumed run's clock counts the training before the checkpoint
        loss_value = result.final_loss if result.curve else float("nan")
        try:
            with interrupts.deferred() if ckpt is not None else nullcontext():  # off: signals act at once, as before
                while True:
                    epoch_sum, epoch_count = 0.0, 0
                    for idx in self._epoch_batches(n, gen, X.device, full_batch):
                        xb, yb = (X, y) if idx is None else (X[idx], y[idx])
                        loss_value = self._loss_then_step(optimizer, loss_fn, xb, yb)
                        result.iterations += 1
                        if not math.isfinite(loss_value):
                            result.status = "diverged"
                            result.error = f"non-finite training loss ({loss_value}) at iteration {result.iterations}"
                            return result
                        self._record(result, loss_value, start, bar, track, track_every)
                        epoch_sum += loss_value
                        epoch_count += 1
                        if full_batch and rule.update(loss_value * scale):
                            result.converged = True
                            return result
                        if result.iterations >= self.max_iters:
                            return result
                    result.epochs += 1
                    if not full_batch:
                        if rule.update(epoch_sum / epoch_count * scale):
                            result.converged = True
                            return result
                        if self.epochs is not None and result.epochs >= self.epochs:
                            return result
                    if ckpt is not None and (ckpt.due() or interrupts.pending()):
                        result.final_loss = loss_value
                        ckpt.save(self._state(module, optimizer, gen, rule, result, time.perf_counter() - start),
                                  self._progress(result))
                    interrupts.deliver()  # a held SIGTERM / SLURM warning acts here, after the checkpoint
        except (NotPSDError, NanError, torch.linalg.LinAlgError) as err:  # LinAlgError: the hand-written Choleskys
            result.status = "diverged"
            result.error = f"{type(err).__name__} at iteration {result.iterations + 1}: {str(err).splitlines()[0]}"
            return result
        finally:
            if track is not None and result.curve and result.status == "ok" and len(result.curve[-1]) <= 3:
                result.curve[-1].update(track())  # the final state is always tracked
            bar.close()
            result.wall_s = time.perf_counter() - start
            result.final_loss = loss_value
            if full_batch:
                result.epochs = result.iterations

    @staticmethod
    def _state(module, optimizer, gen, rule, result: TrainResult, elapsed: float) -> dict:
        """A checkpoint of fit's state at the end of an iteration (minibatch: an epoch)."""
        return {"module": module.state_dict(), "optimizer": optimizer.state_dict(), "rng": rng_state(),
                "generator": gen.get_state(), "rule": list(rule.recent), "elapsed": elapsed,
                "result": {"iterations": result.iterations, "epochs": result.epochs, "final_loss": result.final_loss,
                           "curve": result.curve, "resumed_at": result.resumed_at}}

    def _progress(self, result: TrainResult) -> float:
        """The fraction of the budget done: iterations over trainer.max_iters, or epochs over trainer.epochs where
        that is further (a minibatch run stops at whichever cap it reaches first)."""
        done = result.iterations / self.max_iters
        return max(done, result.epochs / self.epochs) if self.epochs else done

    @staticmethod
    def _resume(ckpt, module, optimizer, gen, rule, result: TrainResult) -> float:
        """Load ckpt (if there is one) over fit's fresh state; returns the training seconds it had spent."""
        state = ckpt.load()
        if state is None or not ckpt.fits(module, state.get("module")):
            return 0.0
        module.load_state_dict(state["module"])
        optimizer.load_state_dict(state["optimizer"])
        set_rng_state(state["rng"])
        gen.set_state(state["generator"])
        rule.recent.extend(state["rule"])
        r = state["result"]
        result.iterations, result.epochs, result.final_loss = r["iterations"], r["epochs"], r["final_loss"]
        result.curve = list(r["curve"])
        result.resumed_at = [*r["resumed_at"], r["iterations"]]
        return float(state["elapsed"])

    def _make_optimizer(self, params, lr: float):
        if self.optimizer == "lbfgs":  # one L-BFGS iteration (strong-Wolfe line search) per step
            return torch.optim.LBFGS(params, lr=lr, max_iter=1, max_eval=25, history_size=50,
                                     line_search_fn="strong_wolfe")
        return torch.optim.Adam(params, lr=lr)

    def _epoch_batches(self, n: int, gen: torch.Generator, device, full_batch: bool):
        """One epoch's minibatch indices (a fresh permutation from the trainer's generator); [None]: full batch."""
        if full_batch:
            return [None]
        return torch.randperm(n, generator=gen).to(device).split(self.batch_size)

    def _loss_then_step(self, optimizer, loss_fn, xb, yb) -> float:
        """One iteration: the loss at the current parameters, then the optimizer's step. Adam takes no step on a
        non-finite loss (fit then marks the run diverged); L-BFGS's line search handles one itself."""
        if self.optimizer == "lbfgs":
            return self._lbfgs_step(optimizer, loss_fn, xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(xb, yb)
        loss_value = loss.item()
        if math.isfinite(loss_value):
            loss.backward()
            optimizer.step()
        return loss_value

    def _record(self, result: TrainResult, loss_value: float, start: float, bar, track, track_every) -> None:
        """The iteration's curve row (with `track`'s metrics at iteration 1 and every track_every), the progress
        bar and the heartbeat line."""
        row = {"iteration": result.iterations, "wall_s": time.perf_counter() - start, "loss": loss_value}
        if track is not None and (result.iterations == 1 or result.iterations % track_every == 0):
            row.update(track())
        result.curve.append(row)
        bar.update(1)
        if self.heartbeat is not None:
            self.heartbeat.tick(result.iterations, self.max_iters, loss_value)
        if result.iterations % 25 == 0:
            bar.set_postfix(loss=f"{loss_value:.4f}", refresh=False)
