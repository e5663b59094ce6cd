"""Registries of model kinds and the validation that reads them."""
