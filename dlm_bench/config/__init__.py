"""Configuration schema and the facts it checks against (leaf layer)."""
