"""dlm_bench: reproduce and compare the benchmarks of five sparse / variational GP papers."""

__version__ = "0.1.0"
