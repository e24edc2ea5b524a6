"""Choosing a provider by one string, vendor names, and the replay provider's checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolfoundry.agent import ProviderError, StopReason, provider_for, run_agent
from toolfoundry.agent.providers import ReplayProvider, ToolNames
from toolfoundry.foundry import Foundry
from toolfoundry.spec import ToolSpec


@pytest.mark.parametrize(
    ("model", "model_id"),
    [
        ("openai:gpt-4o-mini", "openai:gpt-4o-mini"),
        ("openai-responses:gpt-4.1-mini", "openai-responses:gpt-4.1-mini"),
        ("anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("compat:qwen2.5:7b", "compat:qwen2.5:7b"),  # Ollama tags keep their colon
        ("replay:demo", "replay:demo"),
        ("replay:demo#reuse", "replay:demo#reuse"),
    ],
)
def test_one_string_chooses_the_provider(
    model: str, model_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert provider_for(model).model_id == model_id


@pytest.mark.parametrize(
    ("model", "needle"),
    [
        ("gpt-4o-mini", "must be 'provider:model'"),
        ("gemini:pro", "unknown provider 'gemini'"),
        ("openai:", "must be 'provider:model'"),
        ("replay:/no/such/recording.json", "cannot read recording"),
        ("replay:demo#nope", "no session 'nope'"),
    ],
)
def test_bad_model_strings_are_configuration_errors(model: str, needle: str) -> None:
    with pytest.raises(ProviderError) as caught:
        provider_for(model)
    assert caught.value.kind == "configuration"
    assert needle in caught.value.message


@pytest.mark.parametrize(
    ("model", "variable"),
    [("openai:gpt-4o-mini", "OPENAI_API_KEY"), ("anthropic:claude-x", "ANTHROPIC_API_KEY")],
)
def test_missing_keys_name_the_variable(
    model: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ProviderError, match=variable):
        provider_for(model)


def test_compat_needs_no_key_and_reads_its_base_url_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TOOLFOUNDRY_COMPAT_API_KEY", raising=False)
    monkeypatch.setenv("TOOLFOUNDRY_COMPAT_BASE_URL", "http://127.0.0.1:8080/v1")
    provider = provider_for("compat:llama")
    client = provider._client  # type: ignore[attr-defined]  # where the base URL went
    assert str(client.base_url).rstrip("/") == "http://127.0.0.1:8080/v1"


def test_unknown_options_are_refused() -> None:
    with pytest.raises(ProviderError, match="unknown provider options"):
        provider_for("compat:m", temperature=0.2)


def test_names_are_sanitised_per_request_with_a_reverse_map() -> None:
    names = ToolNames(["ok_name", "has.dot", "has_dot", "9lives", "x" * 80])
    assert names.wire("ok_name") == "ok_name"
    assert names.wire("has.dot") == "has_dot"
    assert names.wire("has_dot") != "has_dot"  # taken: a distinct, stable wire name
    assert names.wire("9lives") == "_9lives"
    assert len(names.wire("x" * 80)) == 64
    for original in ["ok_name", "has.dot", "has_dot", "9lives", "x" * 80]:
        assert names.tool(names.wire(original)) == original
    assert names.tool("never_offered") == "never_offered"
    spec = ToolSpec("has_dot", "d")
    assert names.specs([spec])[0].name == names.wire("has_dot")


def recording(tmp_path: Path, turns: list[dict[str, Any]]) -> str:
    path = tmp_path / "rec.json"
    data = {
        "format": "toolfoundry-replay/1",
        "label": "test",
        "sessions": {"only": {"task": "t", "turns": turns}},
    }
    path.write_text(json.dumps(data))
    return str(path)


def test_replay_stops_when_the_real_results_drift_from_the_recording(
    tmp_path: Path, foundry: Foundry
) -> None:
    path = recording(
        tmp_path,
        [
            {"tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 1, "b": 1}}]},
            {"expect": {"result_contains": ['"value": 3']}, "text": "three"},
        ],
    )
    run = run_agent("t", provider_for(f"replay:{path}"), foundry)
    assert run.stop_reason is StopReason.PROVIDER_ERROR
    assert "diverged" in run.stop_message
    assert "'\"value\": 3'" in run.stop_message


def test_replay_refuses_to_call_a_tool_the_loop_did_not_offer(
    tmp_path: Path, foundry: Foundry
) -> None:
    path = recording(tmp_path, [{"tool_calls": [{"name": "later_tool", "arguments": {}}]}])
    run = run_agent("t", provider_for(f"replay:{path}"), foundry)
    assert run.stop_reason is StopReason.PROVIDER_ERROR
    assert "later_tool not offered" in run.stop_message


def test_replay_picks_the_session_by_task_and_ends_cleanly(foundry: Foundry) -> None:
    provider = ReplayProvider("demo")
    task = provider.recording.sessions["reuse"]["task"]
    foundry.create_tool(
        {
            "name": "slugify",
            "description": "Slug.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "code": "export function handler({ text }) {\n"
            "  return text.toLowerCase().replaceAll(' ', '-');\n}\n",
            "tests": [{"input": {"text": "A B"}, "expected": "a-b"}],
        }
    )
    run = run_agent(task, provider, foundry)
    assert run.stop_reason is StopReason.COMPLETED
    assert run.final_text == "found-again-after-a-restart"
    assert run.turns[0].outcomes[0].result["value"] == "found-again-after-a-restart"


def test_a_recording_must_say_its_format(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"sessions": {}}')
    with pytest.raises(ProviderError, match="toolfoundry-replay/1"):
        ReplayProvider(str(path))


@pytest.mark.parametrize(
    "raw",
    [
        "[" * 5000 + "]" * 5000,  # deeper than the stdlib parser's recursion limit
        '{"n": ' + "7" * 5000 + "}",  # past the 4300-digit int conversion limit
        '{"x": 1e999}',  # Infinity
        '{"s": "\\ud800"}',  # a lone surrogate
    ],
    ids=["deep", "huge-int", "infinity", "lone-surrogate"],
)
def test_hostile_tool_call_arguments_are_unreadable_not_a_crash(raw: str) -> None:
    from toolfoundry.agent.providers.calls import parse_arguments

    assert parse_arguments(raw) == (None, raw)
