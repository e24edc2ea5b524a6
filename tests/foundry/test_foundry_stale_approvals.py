"""The registry's one rule for approving a stale or disabled tool's pending version
(registry/holds.py), through the registry on both stores, the Python API and the CLI: a
pending version older than one that has been active is refused ``superseded``, one of a
disabled tool ``disabled``; both are marked in the queue; rejecting them still works."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.foundry.review import pending_reviews
from toolfoundry.registry import AuditEvent, HoldKind, RegistryError, VersionStatus

ACTIVE = VersionStatus.ACTIVE


def pure_temp(description: str = "Current temperature for a city") -> dict[str, Any]:
    """``temp`` without the network: the policy lets it in without a person."""
    draft = network_draft("temp", "api.example.com", description=description)
    draft.pop("capabilities")
    draft.pop("fixtures")
    draft["code"] = "export function handler({ city }) { return city === 'Oslo' ? -3 : 0; }\n"
    return draft


def stale(fd: Foundry) -> None:
    """temp v1 active, v2 pending (it asks for the network), v3 active and current."""
    assert fd.create_tool(pure_temp()).status == "active"
    assert fd.create_tool(network_draft("temp", "api.example.com")).status == "pending_approval"
    assert fd.create_tool(pure_temp("Temperature of a city")).status == "active"
    assert fd.show("temp").version == 3


def disabled_with_pending(fd: Foundry) -> None:
    """temp v1 active, v2 pending, then temp disabled by carol."""
    assert fd.create_tool(pure_temp()).status == "active"
    assert fd.create_tool(network_draft("temp", "api.example.com")).status == "pending_approval"
    fd.disable("temp", by="carol")


def test_the_registry_refuses_a_superseded_version_under_its_lock(fd: Foundry) -> None:
    stale(fd)
    before = fd.audit("temp")
    with pytest.raises(RegistryError) as raised:
        fd.registry.decide("temp", 2, approve=True, by="alice", reason="")
    assert raised.value.kind == "superseded"
    assert "v3" in raised.value.message
    assert "roll the tool back" in raised.value.message
    assert (fd.show("temp").version, fd.show("temp").status) == (3, ACTIVE)
    assert fd.show("temp", 2).status is VersionStatus.PENDING_APPROVAL
    assert fd.audit("temp") == before  # nothing written
    held = fd.registry.approval_holds()
    assert held[("temp", 2)].kind is HoldKind.SUPERSEDED
    assert held[("temp", 2)].by_version == 3
    # rejecting it clears the queue
    done = fd.registry.decide("temp", 2, approve=False, by="alice", reason="superseded")
    assert done.status is VersionStatus.REJECTED
    assert fd.registry.approval_holds() == {}


def test_a_rollback_does_not_make_a_superseded_version_approvable(fd: Foundry) -> None:
    stale(fd)
    fd.rollback("temp", 1, by="alice")  # v1 current again; v3 is still a version that went live
    refused = fd.approve("temp", 2, by="alice")
    assert refused.step.blockers == ("superseded",)
    assert fd.show("temp").version == 1


def test_a_newer_pending_version_is_approvable_and_supersedes_the_older(fd: Foundry) -> None:
    assert fd.create_tool(pure_temp()).status == "active"
    first = network_draft("temp", "api.example.com")
    assert fd.create_tool(first).version == 2
    assert fd.create_tool({**first, "description": "Temperature, elsewhere"}).version == 3
    assert fd.registry.approval_holds() == {}  # both newer than anything live
    assert fd.approve("temp", 3, by="alice").status == "active"
    refused = fd.approve("temp", by="alice")  # the one pending left: v2, now superseded
    assert (refused.version, refused.step.blockers) == (2, ("superseded",))
    assert fd.show("temp").version == 3


def test_python_api_refuses_and_the_queue_says_superseded(fd: Foundry) -> None:
    stale(fd)
    for version in (2, None):  # named, or the one pending version
        decision = fd.approve("temp", version, by="alice")
        assert decision.step.blockers == ("superseded",)
        assert "superseded" in decision.step.message
    assert fd.show("temp").version == 3
    [packet] = pending_reviews(fd)
    assert packet["approval_hold"]["kind"] == "superseded"
    assert packet["approval_hold"]["by_version"] == 3
    assert "approved" not in [e.event.value for e in fd.audit("temp")]


def test_approving_a_disabled_tools_version_is_refused_until_enabled(fd: Foundry) -> None:
    disabled_with_pending(fd)
    decision = fd.approve("temp", 2, by="alice")
    assert decision.step.blockers == ("disabled",)
    assert "disabled (by 'carol')" in decision.step.message
    assert fd.show("temp").status is VersionStatus.DISABLED  # not switched back on
    assert fd.show("temp").version == 1
    [packet] = pending_reviews(fd)
    assert packet["approval_hold"]["kind"] == "disabled"
    assert "'carol'" in packet["approval_hold"]["message"]

    fd.enable("temp", by="carol")
    assert pending_reviews(fd)[0]["approval_hold"] is None
    assert fd.approve("temp", 2, by="alice").status == "active"
    events = [e.event for e in fd.audit("temp")]
    assert events.count(AuditEvent.APPROVED) == 1


def test_a_disabled_tools_version_can_still_be_rejected(fd: Foundry) -> None:
    disabled_with_pending(fd)
    assert fd.reject("temp", 2, by="alice", reason="not now").status == "rejected"
    assert fd.show("temp").status is VersionStatus.DISABLED


def test_cli_refuses_and_lists_held_versions(db_url: str) -> None:
    runner = CliRunner()

    def cli(*args: str) -> Any:
        return runner.invoke(main, [*args, "--db", db_url], env={"COLUMNS": "400"})

    with Foundry.open(db_url) as fd:
        stale(fd)
    refused = cli("approvals", "approve", "temp@2", "--by", "alice")
    assert refused.exit_code == 1
    assert "superseded" in refused.stderr
    as_json = json.loads(cli("approvals", "approve", "temp", "--json").stdout)
    assert as_json["step"]["blockers"] == ["superseded"]
    listed = cli("approvals", "list")
    assert "superseded by v3" in listed.stdout
    [packet] = json.loads(cli("approvals", "list", "--json").stdout)
    assert packet["approval_hold"]["kind"] == "superseded"
    shown = cli("approvals", "show", "temp@2")
    assert "superseded" in shown.stdout
    with Foundry.open(db_url) as fd:
        assert fd.show("temp").version == 3
        fd.disable("temp", by="carol")
    assert "superseded by v3" in cli("approvals", "list").stdout  # the lasting reason first


def test_cli_says_a_tool_is_disabled_before_the_approval(db_url: str) -> None:
    runner = CliRunner()

    def cli(*args: str) -> Any:
        return runner.invoke(main, [*args, "--db", db_url], env={"COLUMNS": "400"})

    with Foundry.open(db_url) as fd:
        disabled_with_pending(fd)
    assert "tool disabled" in cli("approvals", "list").stdout
    assert "disabled (by 'carol')" in cli("approvals", "show", "temp@2").stdout
    refused = cli("approvals", "approve", "temp@2", "--by", "alice")
    assert refused.exit_code == 1
    assert "disabled" in refused.stderr
    with Foundry.open(db_url) as fd:
        assert fd.show("temp").status is VersionStatus.DISABLED
