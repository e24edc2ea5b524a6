"""Tools that use tools over MCP stdio with the official client: create_tool makes a tool whose
code calls another (active, its test reaching the real callee); show_tool says what each uses
and what uses it; a new version of the callee that breaks the dependent's test is refused,
naming the dependent and the test; an unknown callee is a located refusal; once a person
disables the callee, the dependent's call fails ``dependency_unavailable`` naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from tests.factories import McpSessionFactory
from tests.shared_drafts import word_count_draft

from toolfoundry import Foundry

from .test_mcp_support import relaxed_config, structured, text_of

TOTAL: dict[str, Any] = {
    "name": "total_words",
    "description": "Count the words of several texts together.",
    "parameters": {
        "type": "object",
        "properties": {"texts": {"type": "array", "items": {"type": "string"}}},
        "required": ["texts"],
    },
    "code": (
        "export async function handler({ texts }) {\n"
        "  let n = 0;\n"
        "  for (const text of texts) n += await tools.word_count({ text });\n"
        "  return n;\n"
        "}\n"
    ),
    "tests": [{"name": "two texts", "input": {"texts": ["a b", "c"]}, "expected": 3}],
}


def characters() -> dict[str, Any]:
    """word_count v2 counting characters: it breaks total_words' test."""
    draft = word_count_draft()
    draft["code"] = "export function handler({ text }) { return text.length; }"
    draft["tests"] = [{"input": {"text": "abc"}, "expected": 3}]
    draft["changes_tests"] = [{"test": "#0", "reason": "counts characters now"}]
    return draft


def test_tools_that_use_tools_over_stdio(tmp_path: Path, mcp_session: McpSessionFactory) -> None:
    relaxed_config(tmp_path)
    db = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(db, config=tmp_path / "toolfoundry.toml") as fd:
        assert fd.create_tool(word_count_draft()).status == "active"

    async def scenario() -> None:
        async with mcp_session(db, tmp_path) as (session, _):
            made = structured(await session.call_tool("create_tool", TOTAL))
            assert made["status"] == "active", made
            shown = structured(await session.call_tool("show_tool", {"name": "total_words"}))
            assert shown["uses"] == [
                {
                    "tool": "word_count",
                    "tested_against": 1,
                    "found": "code",
                    "status": "active",
                    "current_version": 1,
                }
            ]
            callee = structured(await session.call_tool("show_tool", {"name": "word_count"}))
            assert [(d["name"], d["version"]) for d in callee["used_by"]] == [("total_words", 1)]

            refused = await session.call_tool("create_tool", characters())
            out = structured(refused)
            assert out["status"] == "rejected"
            assert out["step"]["blockers"] == ["breaks_dependents"]
            [finding] = [f for f in out["findings"] if f["severity"] == "error"]
            assert finding["rule"] == "breaks_dependent"
            assert "total_words@1" in finding["message"]
            assert "'two texts'" in finding["message"]

            typo = dict(TOTAL, name="typo", code=TOTAL["code"].replace("word_count", "wordcount"))
            unknown = structured(await session.call_tool("create_tool", typo))
            [finding] = unknown["findings"]
            assert (finding["rule"], finding["line"]) == ("unknown_callee", 3)
            assert "did you mean 'word_count'?" in finding["message"]

            with Foundry.open(db, config=tmp_path / "toolfoundry.toml") as fd:
                fd.disable("word_count", by="alice")
            failed = await session.call_tool("total_words", {"texts": ["a b"]})
            assert failed.is_error
            error = structured(failed)["error"]
            assert error["kind"] == "dependency_unavailable"
            assert "'total_words' depends on 'word_count'" in error["message"]
            assert "disabled (by 'alice')" in text_of(failed)

    anyio.run(scenario)
    with Foundry.open(db, config=tmp_path / "toolfoundry.toml") as fd:
        assert [v.version for v in fd.history("word_count")] == [1]  # the refusal stored nothing
        assert fd.usage("total_words").failures == {"dependency_unavailable": 1}
