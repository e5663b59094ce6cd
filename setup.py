"""The package list, found rather than written out: every package under dlm_bench/ (a new paper's package included),
plus the two folders at the repository root that pyproject.toml's package-dir maps into it (conf/ ->
dlm_bench.conf, data/ -> dlm_bench.shipped_data). Everything else is in pyproject.toml; pyproject alone cannot
combine discovery with those two mapped packages."""

from setuptools import find_packages, setup

setup(packages=find_packages(include=["dlm_bench", "dlm_bench.*"]) + ["dlm_bench.conf", "dlm_bench.shipped_data"])
