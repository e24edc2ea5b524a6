"""``toolfoundry tools report``: unused tools, failure rates, capabilities held, pending
versions and retired tests, through the CLI on a real registry."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from click.testing import CliRunner, Result
from sqlalchemy import update

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.registry.schema import tools, usage

T1 = {"name": "T1", "input": {"text": "Hello World"}, "expected": "hello-world"}
KEEPS_CASE = (
    "export function handler({ text }) {\n  return text.replace(/[^A-Za-z0-9]+/g, '-');\n}\n"
)
T3 = {"name": "T3", "input": {"text": "Hi There"}, "expected": "Hi-There"}


def report(db: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["tools", "report", "--db", db, *args])


def as_json(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)  # strict JSON
    assert isinstance(body, dict)
    return body


def age(fd: Foundry, name: str, days: float, *, used: bool) -> None:
    """Move a tool's creation (and, when ``used``, its last call) ``days`` into the past:
    what the registry holds after that much time without calls."""
    at = datetime.now(UTC) - timedelta(days=days)
    with fd.registry.engine.begin() as conn:
        conn.execute(update(tools).where(tools.c.name == name).values(created_at=at))
        if used:
            conn.execute(update(usage).where(usage.c.tool == name).values(last_at=at))


def populated(fd: Foundry, kit: Any, host: str) -> Foundry:
    # copies of slugify under other names, on purpose: the duplicate check is off here
    fd = Foundry(fd.registry, replace(kit.loopback(host), duplicate_candidates=0))
    # slugify: v1 -> v3 retiring v1:T1 with a reason; called 4 times, 1 failed
    assert fd.create_tool(kit.slugify(tests=[T1])).status == "active"
    change = {"test": "v1:T1", "reason": "slugs keep their case now"}
    v2 = fd.create_tool(kit.slugify(code=KEEPS_CASE, tests=[T3], changes_tests=[change]))
    assert v2.status == "active", v2.to_dict()
    for kind in (None, None, None, "runtime_error"):
        fd.registry.record_call("slugify", 2, duration_ms=1.0, error_kind=kind)
    # weather: network tool, pending approval (its first version)
    assert fd.create_tool(kit.weather(host)).status == "pending_approval"
    # old_unused: created 90 days ago, never called; old_used: last called 40 days ago
    for name in ("old_unused", "old_used", "fresh"):
        draft = kit.slugify(name=name, description=f"Slug maker {name}")
        assert fd.create_tool(draft).status == "active"
    fd.registry.record_call("old_used", 1, duration_ms=2.0, error_kind="timeout")
    fd.registry.record_call("old_used", 1, duration_ms=2.0, error_kind=None)
    age(fd, "old_unused", 90, used=False)
    age(fd, "old_used", 45, used=False)
    age(fd, "old_used", 40, used=True)
    return fd


def test_report_sections(fd: Foundry, db_url: str, kit: Any, weather_server: str) -> None:
    populated(fd, kit, weather_server)
    body = as_json(report(db_url, "--json"))
    assert (body["tools"], body["active"], body["unused_days"]) == (5, 4, 30)
    assert [(u["name"], u["calls"]) for u in body["unused"]] == [("old_unused", 0), ("old_used", 2)]
    assert body["unused"][0]["last_used"] is None
    assert 89.9 <= body["unused"][0]["idle_days"] <= 90.1
    assert 39.9 <= body["unused"][1]["idle_days"] <= 40.1
    # highest failure rate first: old_used 1 of 2, slugify 1 of 4
    assert body["failures"] == [
        {
            "name": "old_used",
            "version": 1,
            "status": "active",
            "calls": 2,
            "failed": 1,
            "failure_rate": 0.5,
            "by_kind": {"timeout": 1},
        },
        {
            "name": "slugify",
            "version": 2,
            "status": "active",
            "calls": 4,
            "failed": 1,
            "failure_rate": 0.25,
            "by_kind": {"runtime_error": 1},
        },
    ]
    assert body["capabilities"] == [
        {
            "name": "weather",
            "version": 1,
            "status": "pending_approval",
            "network": [weather_server],
            "credentials": [],
            "storage": "none",
            "system": False,
        }
    ]
    [pending] = body["pending"]
    assert (pending["name"], pending["version"], pending["waiting_days"]) == ("weather", 1, 0.0)
    assert pending["capabilities"] == {"network": [weather_server]}
    [retired] = body["retired_tests"]
    assert {k: retired[k] for k in ("name", "version", "test", "reason")} == {
        "name": "slugify",
        "version": 2,
        "test": "v1:T1",
        "reason": "slugs keep their case now",
    }
    # a longer window: old_used (40 days) is no longer unused
    longer = as_json(report(db_url, "--json", "--unused-days", "60"))
    assert [u["name"] for u in longer["unused"]] == ["old_unused"]


def test_report_text(fd: Foundry, db_url: str, kit: Any, weather_server: str) -> None:
    populated(fd, kit, weather_server)
    result = report(db_url)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "5 tool(s), 4 active" in out
    assert "unused for 30 day(s): 2" in out
    assert "old_unused v1  idle 90.0 day(s), 0 call(s), last used never" in out
    assert "old_used v1  50.0% of 2 call(s) failed (timeout 1)" in out
    assert "slugify v2  25.0% of 4 call(s) failed (runtime_error 1)" in out
    assert f"weather v1 (pending_approval)  network {weather_server}" in out
    assert "weather v1  by " in out
    assert "slugify v2  retired v1:T1 (slugs keep their case now)" in out


def test_an_empty_registry_reports_nothing(db_url: str) -> None:
    body = as_json(report(db_url, "--json", "--unused-days", "0"))
    assert (body["tools"], body["unused"], body["failures"], body["pending"]) == (0, [], [], [])
    text = report(db_url)
    assert "0 tool(s), 0 active" in text.output
    assert "retired tests: none" in text.output


def test_bad_windows_are_usage_errors(db_url: str) -> None:
    for bad in ("-1", "nan", "1e400", "99999999999999999999"):
        result = report(db_url, "--unused-days", bad)
        assert result.exit_code == 2, (bad, result.output)
        assert "--unused-days" in result.output


def test_lookalike_hosts_and_control_characters_are_shown_escaped(
    fd: Foundry, db_url: str, kit: Any
) -> None:
    from toolfoundry.registry import NewVersion, VersionStatus
    from toolfoundry.spec import Capabilities

    fd.registry.add_version(
        NewVersion(
            name="lookalike",
            code="export function handler() { return 1 }",
            description="x",
            parameters={"type": "object", "properties": {}},
            status=VersionStatus.PENDING_APPROVAL,
            author="eve\x1b[2J\u202e",
            capabilities=Capabilities.from_dict({"network": ["api.g\u0456thub.com"]}),
        )
    )
    result = report(db_url)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert "\u202e" not in result.output
    assert "punycode" in result.output  # the host in both forms, with the warning
    assert "eve\\x1b[2J" in result.output
    body = json.loads(report(db_url, "--json").stdout)
    assert body["pending"][0]["author"] == "eve\x1b[2J\u202e"  # JSON: lossless, escaped
