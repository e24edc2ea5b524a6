"""Properties: the forge never raises for bad input, and JSON equality behaves like JSON."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolfoundry.forge import DraftError, check_javascript, forge_draft, json_equal, parse_draft
from toolfoundry.forge.draft_json import DRAFT_FIELDS
from toolfoundry.spec import Problem

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
KEYS = st.sampled_from([*DRAFT_FIELDS, "input", "expected", "junk"])
DRAFTS = st.dictionaries(KEYS, JSON, max_size=8)


@settings(max_examples=60, deadline=None)
@given(DRAFTS)
def test_parse_draft_raises_only_draft_errors(data: dict[str, Any]) -> None:
    problems: tuple[Problem, ...] = ()
    try:
        parse_draft(data)
    except DraftError as exc:
        problems = exc.problems
        assert problems
    assert all(p.path.startswith("$") and p.message for p in problems)


@settings(max_examples=60, deadline=None)
@given(DRAFTS | JSON | st.binary(max_size=40))
def test_forge_draft_never_raises_and_reports_json(data: Any) -> None:
    report = forge_draft(data)
    assert report.status.value in ("active", "pending_approval", "rejected")
    assert json.loads(json.dumps(report.to_dict()))["status"] == report.status.value


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_static_check_never_raises(code: str) -> None:
    for finding in check_javascript(code):
        assert finding.rule
        assert finding.message


@settings(max_examples=100, deadline=None)
@given(JSON)
def test_json_equality_is_reflexive_through_json(value: Any) -> None:
    assert json_equal(value, value)
    assert json_equal(value, json.loads(json.dumps(value)))
