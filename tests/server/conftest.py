"""The registry the review page and its API are tested against."""

from __future__ import annotations

import pytest

from toolfoundry import Foundry

from .test_server_web_support import seed


@pytest.fixture
def fd(foundry: Foundry) -> Foundry:
    """The shared foundry seeded by :func:`seed` (shout v1/v2 active, weather and news
    pending)."""
    seed(foundry)
    return foundry
