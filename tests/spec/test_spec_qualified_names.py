"""Upstream tools' names: ``UPSTREAM.TOOL`` in a ToolSpec, never in a draft."""

from __future__ import annotations

import pytest

from toolfoundry.spec import InvalidName, ToolSpec, validate_name
from toolfoundry.spec.names import is_qualified, validate_spec_name


def test_a_spec_may_carry_an_upstream_tools_qualified_name() -> None:
    spec = ToolSpec("github.create_issue", "Open an issue.")
    assert spec.name == "github.create_issue"
    assert is_qualified(spec.name)
    assert not is_qualified("create_issue")


@pytest.mark.parametrize(
    "name", ["a.b.c", ".tool", "tool.", "a..b", "1a.b", "a.b c", "a." + "b" * 63, "a.b\ud800"]
)
def test_a_qualified_name_has_two_portable_parts_within_64_characters(name: str) -> None:
    with pytest.raises(InvalidName):
        validate_spec_name(name)


def test_a_registry_tool_name_never_holds_the_separator() -> None:
    with pytest.raises(InvalidName):
        validate_name("github.create_issue")
