"""The shipped papers' declarations, one module each (`PAPER = Paper(...)`, config/papers.py), with its report layouts
beside it (<paper>.yaml, report/layout_files.py). Discovered by config/papers.py: a module added here is a paper."""
