"""Foundry.call: validation, status checks, capabilities mapped to the sandbox, usage, audit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.factories import error_of

from toolfoundry import Foundry
from toolfoundry.config import ConfigError, parse_config
from toolfoundry.registry import AuditEvent
from toolfoundry.spec import StepStatus

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit

STORE = {
    "name": "counter",
    "description": "Count how many times a key was seen, kept between calls",
    "parameters": {
        "type": "object",
        "properties": {"key": {"type": "string"}},
        "required": ["key"],
    },
    "code": (
        "export function handler({ key }) {\n"
        "  const n = Number(localStorage.getItem(key) || '0') + 1;\n"
        "  localStorage.setItem(key, String(n));\n"
        "  return n;\n"
        "}\n"
    ),
    "capabilities": {"storage": True},
    "tests": [{"input": {"key": "a"}, "expected": 1}],
}


def test_invalid_arguments_report_every_problem_with_its_path(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(
        kit.slugify(
            name="pairs",
            parameters={
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "items": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["text"],
                "additionalProperties": False,
            },
            tests=[{"input": {"text": "A b"}, "expected": "a-b"}],
        )
    )
    out = fd.call("pairs", {"items": [1, "two", 3.5], "extra": True})
    assert not out.ok
    assert error_of(out).kind.value == "invalid_arguments"
    paths = sorted(p.path for p in error_of(out).problems)
    assert paths == ["$", "$", "$.items[1]", "$.items[2]"]
    messages = " ".join(p.message for p in error_of(out).problems)
    assert "'text' is a required property" in messages
    assert "'extra' was unexpected" in messages
    assert out.details["step"]["blockers"] == ["invalid_arguments"]
    assert not fd.call("pairs", ["not", "an", "object"]).ok


ECHO = {
    "name": "echo",
    "description": "Return the value it was given, unchanged",
    "parameters": {
        "type": "object",
        "properties": {"value": {"type": ["string", "number", "array", "object"]}},
        "required": ["value"],
    },
    "code": "export function handler({ value }) { return value; }\n",
    "tests": [{"input": {"value": "a"}, "expected": "a"}],
}


def _nest(depth: int) -> object:
    value: object = "a"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "path", "words"),
    [
        ("x\ud800", "$.value", "surrogate"),
        ({"k\udc00": 1}, "$.value", "surrogate"),
        (10**400, "$.value", "range"),
        (float("nan"), "$.value", "json number"),
        (_nest(200), "$.value[0][0]", "deep"),
        (True, "$.value", "string"),  # valid JSON, refused by the schema
    ],
)
def test_hostile_arguments_are_refused_before_the_sandbox(
    fd: Foundry, value: str | int | float | bool | dict[str, Any] | list[Any], path: str, words: str
) -> None:
    fd.create_tool(ECHO)
    out = fd.call("echo", {"value": value})
    assert out.error is not None
    assert error_of(out).kind.value == "invalid_arguments"
    assert error_of(out).problems[0].path.startswith(path)
    assert words in error_of(out).problems[0].message.lower()


def test_the_sandbox_runs_on_the_arguments_that_passed_the_gate(fd: Foundry) -> None:
    fd.create_tool(ECHO)
    value = {"t": "caf\u00e9 \u2028 \u202e \x00 \U0001f600", "n": [2**53, -0.5, 1e300]}
    out = fd.call("echo", {"value": value})
    assert out.ok
    assert out.value == value


def test_unknown_tools_and_versions_are_not_found(fd: Foundry, kit: type[Kit]) -> None:
    assert error_of(fd.call("nope", {})).kind.value == "not_found"
    fd.create_tool(kit.slugify())
    assert error_of(fd.call("slugify", {"text": "x"}, version=7)).kind.value == "not_found"


def test_pinned_versions_and_rollback(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(kit.slugify())
    fd.create_tool(kit.slugify(code=kit.better))
    assert fd.call("slugify", {"text": "-a-"}).value == "a"
    assert fd.call("slugify", {"text": "-a-"}, version=1).value == "-a-"
    fd.rollback("slugify", 1)
    assert fd.call("slugify", {"text": "-a-"}).value == "-a-"
    assert [v.version for v in fd.history("slugify")] == [1, 2]


def test_call_details_name_the_version_that_answered(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(kit.slugify())
    fd.create_tool(kit.slugify(code=kit.better))
    assert fd.call("slugify", {"text": "x"}).details["version"] == 2
    assert fd.call("slugify", {"text": "x"}, version=1).details["version"] == 1
    assert fd.call("slugify", {"nope": 1}).details["version"] == 2  # refused, but resolved
    assert "version" not in fd.call("missing", {}).details


def test_disabled_and_pending_tools_are_not_active(
    fd: Foundry, kit: type[Kit], weather_server: str
) -> None:
    fd = Foundry(fd.registry, kit.loopback(weather_server))
    fd.create_tool(kit.slugify())
    fd.disable("slugify")
    out = fd.call("slugify", {"text": "x"})
    assert error_of(out).kind.value == "not_active"
    assert out.details["step"]["status"] == StepStatus.BLOCKED.value
    assert fd.active_specs() == []
    fd.enable("slugify")
    assert fd.call("slugify", {"text": "x"}).ok
    fd.create_tool(kit.weather(weather_server))
    assert error_of(fd.call("weather", {"city": "Oslo"})).kind.value == "not_active"
    assert fd.usage("weather").failures == {"not_active": 1}


def test_usage_and_called_audit_rows(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(kit.slugify())
    for text in ("a", "b", "c"):
        assert fd.call("slugify", {"text": text}).ok
    fd.call("slugify", {"text": 1})
    stats = fd.usage("slugify")
    assert stats.calls == 4
    assert stats.failures == {"invalid_arguments": 1}
    assert stats.p50_ms is not None
    assert stats.p95_ms is not None
    assert stats.p95_ms >= stats.p50_ms
    called = [e for e in fd.audit("slugify") if e.event is AuditEvent.CALLED]
    assert len(called) == 4
    assert [e.detail["ok"] for e in called] == [True, True, True, False]


def test_storage_capability_persists_in_the_registry(db_url: str) -> None:
    first = Foundry.open(db_url)
    assert first.create_tool(STORE).status == "active"  # own namespace: no approval needed
    assert [first.call("counter", {"key": "k"}).value for _ in range(3)] == [1, 2, 3]
    first.close()
    second = Foundry.open(db_url)
    assert second.call("counter", {"key": "k"}).value == 4
    assert second.registry.storage.keys("tool:counter") == ["k"]
    second.close()


def test_network_tool_waits_for_approval_then_reaches_the_server(
    db_url: str, kit: type[Kit], weather_server: str
) -> None:
    config = parse_config(
        {"fetch": {"allow_http": [weather_server], "allow_private": ["127.0.0.1"]}}
    )
    fd = Foundry.open(db_url, config=config)
    result = fd.create_tool(kit.weather(weather_server))
    assert result.status == "pending_approval"
    assert result.step.blockers == ("awaiting_approval",)
    assert [p.name for p in fd.pending()] == ["weather"]
    decision = fd.approve("weather", by="alice", reason="reads a public API")
    assert decision.status == "active"
    assert decision.step.status is StepStatus.COMPLETED
    (approval,) = fd.registry.approvals("weather")
    assert approval.code_sha256 == fd.show("weather").sha256
    out = fd.call("weather", {"city": "Bergen"})
    assert out.ok, out.to_dict()
    assert out.value == 6
    fd.close()


def test_configured_allowlist_narrows_an_approved_tool(
    db_url: str, kit: type[Kit], weather_server: str
) -> None:
    with Foundry.open(db_url, config=kit.loopback(weather_server)) as before:
        assert before.create_tool(kit.weather(weather_server)).status == "pending_approval"
    # then the operator narrows [fetch] allow: the approved tool may no longer reach its host
    config = parse_config(
        {
            "fetch": {
                "allow": ["api.example.com"],
                "allow_http": [weather_server],
                "allow_private": ["127.0.0.1"],
            }
        }
    )
    fd = Foundry.open(db_url, config=config)
    fd.approve("weather", by="alice", reason="ok")
    out = fd.call("weather", {"city": "Oslo"})
    assert not out.ok
    assert error_of(out).kind.value == "capability_denied"
    fd.close()


def test_approve_and_reject_report_blocked_steps(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(kit.slugify())
    nothing = fd.approve("slugify", by="alice")
    assert nothing.step.blockers == ("not_pending",)
    assert fd.reject("ghost", by="alice", reason="x").step.blockers == ("not_found",)


def test_bad_configuration_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "toolfoundry.toml"
    path.write_text('[fetch]\nallow = "everything"\n[limits]\ntimeout_s = -1\n[colour]\n')
    with pytest.raises(ConfigError) as err:
        Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=path)
    message = str(err.value)
    assert "fetch.allow" in message
    assert "limits.timeout_s" in message
    assert "[colour]" in message


def test_catalog_and_active_specs(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(kit.slugify())
    (spec,) = fd.active_specs()
    assert spec.name == "slugify"
    assert spec.version == 1
    assert '"slugify"' in fd.catalog("openai")
    assert [h.name for h in fd.search("url slug title")] == ["slugify"]
