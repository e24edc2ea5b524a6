"""Fixtures shared across areas. Area-specific fixtures live in tests/<area>/conftest.py."""
