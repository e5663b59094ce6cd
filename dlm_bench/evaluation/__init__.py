"""Evaluation of a trained bundle: predictive metrics (predictive.py), one path for every likelihood."""

from .predictive import METRICS, RAW, predict_f, predictive_likelihood, predictive_metrics

__all__ = ["METRICS", "RAW", "predict_f", "predictive_likelihood", "predictive_metrics"]
