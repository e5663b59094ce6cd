"""Small utilities without dlm_bench imports: locks, environment blocks, log lines, the jittered Cholesky."""
