"""Fixtures of the hub tests: the shared PostgreSQL fixtures live in ``tests/conftest.py``."""
