"""Approvals and lifecycle through the HTTP API (issue 11): an approval names its version,
a disabled tool answers at no version, the audit log names who acted."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from toolfoundry import Foundry

from .test_server_web_api import Api
from .test_server_web_support import compose, network_draft


@pytest.fixture
def api(fd: Foundry) -> Iterator[Api]:
    with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as client:
        yield Api(client)


def test_an_approval_binds_the_version_in_its_path(api: Api, fd: Foundry) -> None:
    later = {**network_draft("weather"), "description": "Temperature from elsewhere"}
    assert api.post("/api/tools", later, 201)["version"] == 2  # arrives after v1 was shown
    done = api.post("/api/tools/weather/versions/1/approve", {"by": "alice"})
    assert (done["version"], done["status"]) == (1, "active")
    assert fd.show("weather", 2).status.value == "pending_approval"
    # there is no way to approve "whatever is newest" over HTTP
    assert api.client.post("/api/tools/weather/approve", json={}).status_code in (404, 405)
    assert fd.show("weather", 2).status.value == "pending_approval"
