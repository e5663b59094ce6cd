"""Sweeps: Hydra multirun launch, per-point jobs, deadlines and cost estimates."""
