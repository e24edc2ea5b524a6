"""Approvals and lifecycle under hostile timing and hostile drafts (issue 11), through the
Python API and the CLI: an approval binds the version the reviewer saw."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.registry import RegistryError, VersionStatus


def _two_pending(fd: Foundry) -> None:
    """weather v1 and v2 both waiting (v2 arrived after a reviewer may have looked at v1)."""
    first = network_draft("weather", "api.example.com")
    assert fd.create_tool(first).status == "pending_approval"
    later = {**first, "description": "Temperature, now from somewhere else"}
    assert fd.create_tool(later).status == "pending_approval"


def _statuses(fd: Foundry, name: str) -> list[str]:
    return [v.status.value for v in fd.history(name)]


def test_approve_without_version_refuses_when_several_are_pending(fd: Foundry) -> None:
    _two_pending(fd)
    decision = fd.approve("weather", by="alice")
    assert decision.step.blockers == ("ambiguous_version",)
    assert "v1, v2" in decision.step.message
    assert "weather@VERSION" in decision.step.message
    assert decision.step.details["pending_versions"] == [1, 2]
    assert (decision.version, decision.status) == (None, None)
    assert fd.reject("weather", by="alice", reason="no").step.blockers == ("ambiguous_version",)
    assert _statuses(fd, "weather") == ["pending_approval", "pending_approval"]
    with pytest.raises(RegistryError) as raised:  # the registry holds the same rule itself
        fd.registry.decide("weather", None, approve=True, by="alice", reason="")
    assert raised.value.kind == "ambiguous_version"
    assert _statuses(fd, "weather") == ["pending_approval", "pending_approval"]

    assert fd.approve("weather", 2, by="alice").status == "active"
    single = fd.approve("weather", by="alice")  # one pending left: allowed, and named
    assert (single.version, single.status) == (1, "active")
    assert single.step.message == "weather v1 approved and active"
    assert [e.event.value for e in fd.audit("weather")].count("approved") == 2


def test_cli_approve_names_the_version_it_approved(db_url: str) -> None:
    runner = CliRunner()

    def cli(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(main, [*args, "--db", db_url])

    fd = Foundry.open(db_url)
    _two_pending(fd)
    shown = cli("approvals", "show", "weather")
    assert shown.exit_code == 0
    assert "2 versions await approval (v1, v2); approve NAME@VERSION" in shown.stdout
    refused = cli("approvals", "approve", "weather", "--by", "alice")
    assert refused.exit_code == 1
    assert "ambiguous_version" in refused.stderr
    assert "v1, v2" in refused.stderr
    as_json = cli("approvals", "approve", "weather", "--json")
    assert json.loads(as_json.stdout)["step"]["details"]["pending_versions"] == [1, 2]
    assert _statuses(fd, "weather") == ["pending_approval", "pending_approval"]

    assert cli("approvals", "reject", "weather@1", "--reason", "old", "--by", "bob").exit_code == 0
    approved = cli("approvals", "approve", "weather", "--by", "alice")
    assert approved.exit_code == 0
    assert "weather v2 approved and active" in approved.stdout
    assert fd.show("weather").status is VersionStatus.ACTIVE
    fd.close()
