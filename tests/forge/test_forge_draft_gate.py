"""Drafts pass the JSON gate: a lone surrogate, an out-of-range number or too deep a nesting
anywhere in a draft is a located problem (never a 500 later, never a stored row that breaks
reviewers), whether the draft comes as JSON text or as a mapping."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolfoundry.forge import DraftError, parse_draft


def draft(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "slug",
        "description": "Make a slug.",
        "author": "model",
        "parameters": {
            "type": "object",
            "properties": {"t": {"type": "string", "description": "the text"}},
        },
        "code": "export function handler({ t }) { return t }",
        "tests": [{"name": "one", "input": {"t": "a"}, "expected": "a"}],
    }
    base.update(fields)
    return base


def problems(data: Any) -> dict[str, str]:
    with pytest.raises(DraftError) as caught:
        parse_draft(data)
    return {p.path: p.message for p in caught.value.problems}


CASES = [
    (draft(description="x\ud800"), "$.description"),
    (draft(author="\udc00"), "$.author"),
    (draft(code="export default 1 // \ud800"), "$.code"),
    (draft(tests=[{"name": "\ud800", "input": {"t": "a"}, "expected": "a"}]), "$.tests[0].name"),
    (
        draft(
            parameters={
                "type": "object",
                "properties": {"t": {"type": "string", "description": "\ud800"}},
            }
        ),
        "$.parameters.properties.t.description",
    ),
    (draft(tests=[{"input": {"t": "a"}, "expected": 10**5000}]), "$.tests[0].expected"),
    (draft(tests=[{"input": {"t": float("inf")}, "expected": 1}]), "$.tests[0].input.t"),
]


@pytest.mark.parametrize(("data", "path"), CASES)
def test_hostile_fields_are_located_in_a_mapping(data: dict[str, Any], path: str) -> None:
    found = problems(data)
    assert path in found, found


@pytest.mark.parametrize(("data", "path"), CASES[:5])
def test_and_in_json_text_with_escapes(data: dict[str, Any], path: str) -> None:
    text = json.dumps(data)  # ASCII: each lone surrogate is a \\udXXX escape in the text
    assert "\\ud" in text
    assert path in problems(text)
    assert path in problems(text.encode("ascii"))


def test_huge_integers_in_text_are_located_not_a_value_error() -> None:
    text = json.dumps(draft()).replace('"expected": "a"', '"expected": ' + "7" * 5000)
    assert "$.tests[0].expected" in problems(text)


def test_a_deep_draft_is_one_problem_at_the_root() -> None:
    text = json.dumps(draft()).replace('"expected": "a"', '"expected": ' + "[" * 200 + "]" * 200)
    found = problems(text)
    assert list(found) == ["$"]
    assert "nests too deeply" in found["$"]
