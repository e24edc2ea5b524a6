"""Sandbox fixtures: skip everything when the guest has not been built."""

from __future__ import annotations

import pytest

from toolfoundry.sandbox.js.installation import GUEST_WASM


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if GUEST_WASM.exists():
        return
    skip = pytest.mark.skip(reason="guest not built: run `make setup`")
    for item in items:
        if "tests/sandbox/js" in str(item.fspath):
            item.add_marker(skip)
