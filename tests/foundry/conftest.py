"""Real parts for the foundry tests: a registry database, a loopback HTTP server, drafts.

Draft files live in ``drafts/`` so the CLI and subprocess tests can use them as they are.
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.config import Config, parse_config
from toolfoundry.registry.schema import metadata

DRAFTS = Path(__file__).parent / "drafts"


class Kit:
    """Drafts and checks shared by the foundry tests."""

    drafts = DRAFTS
    slugify_path = DRAFTS / "slugify.json"
    better = (DRAFTS / "slugify_better.js").read_text()  # passes v1's tests, trims dashes
    regression = (DRAFTS / "slugify_regression.js").read_text()  # upper-cases: breaks v1

    @staticmethod
    def slugify(**changes: Any) -> dict[str, Any]:
        """A fresh copy of the slugify draft with some fields replaced."""
        draft: dict[str, Any] = json.loads(Kit.slugify_path.read_text())
        draft.update(copy.deepcopy(changes))
        return draft

    @staticmethod
    def snapshot(fd: Foundry) -> dict[str, int]:
        """Row counts of every registry table: equal snapshots mean nothing was stored."""
        with fd.registry.engine.connect() as conn:
            return {
                t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
                for t in metadata.sorted_tables
            }

    @staticmethod
    def weather(host: str) -> dict[str, Any]:
        """A network tool for the loopback server, tested with a fetch fixture."""
        return network_draft(
            "weather",
            host,
            scheme="http",
            description="Current temperature for a city",
            test_name=None,
        )

    @staticmethod
    def loopback_config(host: str) -> str:
        """toolfoundry.toml text letting calls reach the loopback server over plain http."""
        return f'[fetch]\nallow_http = ["{host}"]\nallow_private = ["127.0.0.1"]\n'

    @staticmethod
    def loopback(host: str) -> Config:
        """:meth:`loopback_config` as a Config: without it, a draft whose fixture is a plain
        http loopback URL is refused at create (no call could fetch it)."""
        return parse_config(tomllib.loads(Kit.loopback_config(host)))


@pytest.fixture
def kit() -> type[Kit]:
    return Kit


@pytest.fixture
def fd(db_url: str) -> Iterator[Foundry]:
    foundry = Foundry.open(db_url)
    yield foundry
    foundry.close()
