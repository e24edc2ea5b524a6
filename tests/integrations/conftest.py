"""Real parts for the adapter tests: a registry on a SQLite file.

Each framework's own agent loop runs with that framework's offline test model, scripted to
make a tool with ``create_tool`` (``drafts.py``), call it in the same run, and send it bad
arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolfoundry import Foundry
from toolfoundry.foundry import telemetry


@pytest.fixture
def fd(foundry: Foundry) -> Foundry:
    """The shared foundry (a SQLite file: adapters call it from worker threads)."""
    return foundry


@pytest.fixture
def recorded() -> Iterator[Any]:
    """toolfoundry's spans and metrics, recorded in memory (a ``recording.Recorded``)."""
    pytest.importorskip("opentelemetry.sdk")
    from tests.integrations.recording import Recorded

    rec = Recorded()
    telemetry.configure(tracer_provider=rec.tracer_provider, meter_provider=rec.meter_provider)
    yield rec
    telemetry.configure()  # back to the global providers
