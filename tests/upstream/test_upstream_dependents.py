"""A registry tool whose code calls an upstream server's tool (``tools.UPSTREAM.TOOL``): its
dependency is recorded with the upstream tool's input schema hash its tests ran against, a tool
fixture answers for the upstream in its tests, and a callee no upstream lists, or one waiting
for a person's approval, is a located refusal."""

from __future__ import annotations

from typing import Any

from toolfoundry.registry import Dependency

from .conftest import UpstreamFoundry, notes_entry

COUNT = "export default async () => (await tools.notes.list_notes({})).notes.length;"


def draft(code: str, **fields: Any) -> dict[str, Any]:
    fixture = {"tool": "notes.list_notes", "args": {}, "value": {"notes": ["a", "b"]}}
    return {
        "name": "note_count",
        "description": "How many notes the notes server keeps.",
        "code": code,
        "tests": [{"input": {}, "expected": 2, "fixtures": [fixture]}],
        **fields,
    }


def test_a_tool_calling_an_upstream_tool_records_its_schema_hash(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    made = fd.create_tool(draft(COUNT))
    assert made.status == "active", made.to_dict()
    listed = fd.upstream_tool("notes.list_notes")
    assert listed is not None
    digest = listed.tool.schema_hash
    assert fd.registry.dependencies("note_count") == [
        Dependency("notes.list_notes", None, digest, "code")
    ]
    [use] = fd.show_tool("note_count")["uses"]
    assert (use["tool"], use["tested_against"], use["schema_hash"]) == (
        "notes.list_notes",
        None,
        digest,
    )
    # a real call reaches the upstream
    fd.run_js("export default () => tools.notes.add_note({ text: 'x' });")
    assert fd.call("note_count", {}).value == 1


def test_an_unlisted_or_waiting_upstream_tool_is_a_located_refusal(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    unknown = fd.create_tool(draft(COUNT.replace("list_notes", "list_all")))
    [finding] = unknown.findings
    assert (finding.rule, finding.line, finding.path) == ("unknown_callee", 1, "$.code")
    assert "no configured upstream lists 'notes.list_all'" in finding.message
    code = "export default async ({ n }) => tools.call(n, {});"
    waiting = fd.create_tool(draft(code, uses=["notes.delete_notes"]))
    [finding] = waiting.findings
    assert (finding.rule, finding.path) == ("inactive_callee", "$.uses[0]")
    assert "needs_approval" in finding.message
