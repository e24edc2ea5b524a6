"""``toolfoundry tools history`` says per version what it changed from the one it was made from."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.foundry.version_changes import version_changes

V1: dict[str, Any] = {
    "name": "greet",
    "description": "Greet someone.",
    "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
    "code": "export function handler({ who }) {\n  return 'hello ' + who;\n}\n",
    "tests": [{"name": "ann", "input": {"who": "Ann"}, "expected": "hello Ann"}],
}


def history(db_url: str, *more: str) -> Any:
    args = ["tools", "history", "greet", "--db", db_url, *more]
    out = CliRunner().invoke(main, args, env={"COLUMNS": "400"})  # the table on one line a row
    assert out.exit_code == 0, out.output
    return out


def test_each_version_says_what_it_changed(fd: Foundry, db_url: str) -> None:
    assert fd.create_tool(V1).version == 1
    v2 = {
        **V1,
        "description": "Greet someone, politely.",
        "code": V1["code"].replace("'hello '", "'good day, '"),
        "tests": [{"name": "bob", "input": {"who": "Bob"}, "expected": "good day, Bob"}],
        "changes_tests": [{"test": "v1:ann", "reason": "the greeting is politer now"}],
    }
    made = fd.create_tool(v2)
    assert (made.status, made.version) == ("active", 2), made.to_dict()
    v3 = {
        **v2,
        "parameters": {
            "type": "object",
            "properties": {"who": {"type": "string", "minLength": 1}},
        },
        "capabilities": {"storage": "tool"},
        "changes_tests": [],
    }
    assert fd.create_tool(v3).version == 3

    changes = version_changes(fd.history("greet"))
    assert changes[1].against is None
    assert changes[1].text() == "first version"
    assert (changes[2].against, changes[2].changed) == (1, ("code", "description"))
    assert (changes[2].tests_added, changes[2].tests_retired) == (("bob",), ("v1:ann",))
    assert changes[3].changed == ("parameters", "capabilities")
    assert changes[3].capabilities_added == ("storage tool",)
    assert changes[3].tests_added == ()  # the same test as v2's
    assert changes[2].text() == "code, description; tests +bob -v1:ann"

    rows = json.loads(history(db_url, "--json").stdout)
    assert [r["changes"]["against"] for r in rows] == [None, 1, 2]
    assert rows[2]["changes"]["changed"] == ["parameters", "capabilities"]
    table = history(db_url).stdout
    assert "first version" in table
    assert "capabilities +storage tool" in table
