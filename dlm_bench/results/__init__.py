"""The results contract: run.json schema, labels, outcome, file modes, speed probe (leaf layer)."""
