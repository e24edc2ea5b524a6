"""What reaches a terminal is shown, never obeyed; hostile input never ends in a traceback.

The terminal threats: ESC bytes, bidi overrides and rich markup written by a model (in
code, a description, a test name, an output or a log) reach the reviewer escaped in
``approvals show``, ``tools show``, ``tools list``, ``js run``, ``call`` and ``create``; and the
last bullet: ``--timeout inf`` is a usage error. All as real subprocesses of the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.shared_drafts import network_draft

# erase the line above, recolour, OSC 52 clipboard write, a bidi override, a C1 CSI, markup
HOSTILE = "\x1b[1A\x1b[2K\x1b[31m \x1b]52;c;ZXZpbA==\x07 \u202e \x9b2J [bold]loud[/bold]"
SHOWN = ("\\x1b[1A", "\\x1b]52;c;ZXZpbA==\\x07", "\\u202e", "\\x9b2J", "[bold]loud[/bold]")


def cli(
    tmp_path: Path, *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    out = subprocess.run(
        [sys.executable, "-m", "toolfoundry", *args],
        capture_output=True,
        input=stdin,
        cwd=tmp_path,
        env={**os.environ, "TOOLFOUNDRY_DB": f"sqlite:///{tmp_path / 'registry.db'}"},
        timeout=180,
        check=False,
    )
    assert b"Traceback" not in out.stderr, out.stderr.decode("utf-8", "replace")
    return out


def assert_escaped(out: subprocess.CompletedProcess[bytes]) -> str:
    """No control byte a terminal would act on; the hostile text visible as escapes."""
    text = (out.stdout + out.stderr).decode("utf-8")  # also: valid UTF-8
    for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert raw not in text, (raw, text)
    return text


def strings(value: Any) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def hostile_draft(name: str) -> dict[str, Any]:
    draft = network_draft(name, "api.example.com", description=f"Weather. {HOSTILE}")
    draft["code"] = f"// {HOSTILE}\n" + draft["code"]
    draft["tests"][0]["name"] = f"oslo {HOSTILE}"
    draft["parameters"]["properties"]["city"]["description"] = f"city {HOSTILE}"
    return draft


def create(tmp_path: Path, draft: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(draft), encoding="utf-8")
    return cli(tmp_path, "create", str(path))


def test_review_commands_show_control_characters_escaped(tmp_path: Path) -> None:
    created = create(tmp_path, hostile_draft("weather"))
    assert created.returncode == 0, created.stderr
    assert_escaped(created)
    for args in (
        ("approvals", "show", "weather"),
        ("approvals", "list"),
        ("tools", "show", "weather"),
        ("tools", "list"),
        ("tools", "history", "weather"),
        ("tools", "search", "weather", "--all"),
    ):
        out = cli(tmp_path, *args)
        assert out.returncode == 0, (args, out.stderr)
        text = assert_escaped(out)
        if args[:2] in {("approvals", "show"), ("tools", "show")}:
            for shown in SHOWN:  # the reviewer sees what is there, markup included
                assert shown in text, (args, shown, text)
    listed = cli(tmp_path, "approvals", "list", "--json")
    data = json.loads(listed.stdout)  # strict JSON: the escapes are JSON escapes, lossless
    assert HOSTILE in data[0]["code"]
    assert_escaped(listed)


def test_call_and_js_run_show_outputs_and_logs_escaped(tmp_path: Path) -> None:
    code = f"console.log({json.dumps(HOSTILE)}); export default () => {json.dumps(HOSTILE)}"
    (tmp_path / "tool.js").write_text(code, encoding="utf-8")
    for extra in ((), ("--json",)):
        out = cli(tmp_path, "js", "run", "tool.js", *extra)
        assert out.returncode == 0, out.stderr
        text = assert_escaped(out)
        assert "[bold]loud[/bold]" in text
    draft = {
        "name": "shout",
        "description": "Says something loud.",
        "code": (
            f"export function handler() {{ console.log({json.dumps(HOSTILE)}); "
            f"return {json.dumps(HOSTILE)} }}"
        ),
        "tests": [{"input": {}, "expected": HOSTILE}],
    }
    assert create(tmp_path, draft).returncode == 0
    for extra in ((), ("--json",)):
        out = cli(tmp_path, "call", "shout", *extra)
        assert out.returncode == 0, out.stderr
        assert_escaped(out)
    failing = cli(tmp_path, "js", "run", "tool.js", "--args", '{"x": ' + "1" * 5000 + "}")
    assert failing.returncode == 2  # --args through the JSON gate: a usage error
    assert b"not a finite double" in failing.stderr


def test_an_invalid_output_is_recorded_in_usage(tmp_path: Path) -> None:
    draft = {
        "name": "huge",
        "description": "Returns a number JSON cannot carry when asked.",
        "parameters": {"type": "object", "properties": {"big": {"type": "boolean"}}},
        "code": 'export function handler({ big }) { return big ? JSON.rawJSON("1e999") : 1 }',
        "tests": [{"input": {"big": False}, "expected": 1}],
    }
    assert create(tmp_path, draft).returncode == 0
    out = cli(tmp_path, "call", "huge", "--args", '{"big": true}', "--json")
    assert out.returncode == 1
    result = json.loads(out.stdout)
    assert result["error"]["kind"] == "invalid_output"
    assert result["error"]["problems"][0]["path"] == "$"
    usage = json.loads(cli(tmp_path, "tools", "usage", "huge", "--json").stdout)
    assert usage["calls"] == 1
    assert usage["failures"] == {"invalid_output": 1}


@pytest.mark.parametrize("timeout", ["inf", "nan", "-1", "1e300", "0"])
def test_js_run_timeout_must_be_a_sensible_number(tmp_path: Path, timeout: str) -> None:
    (tmp_path / "t.js").write_text("export default 1", encoding="utf-8")
    out = cli(tmp_path, "js", "run", "t.js", "--timeout", timeout)
    assert out.returncode == 2  # a usage error, not an OverflowError traceback
    assert b"--timeout" in out.stderr


def test_describe_and_the_skill_catalogue_show_control_characters_escaped(tmp_path: Path) -> None:
    draft = {
        "name": "shout",
        "description": f"Says something loud. {HOSTILE}",
        "parameters": {
            "type": "object",
            "properties": {"word": {"type": "string", "description": f"word {HOSTILE}"}},
        },
        "code": "export function handler({ word }) { return word }",
        "tests": [{"input": {"word": "hi"}, "expected": "hi"}],
    }
    assert create(tmp_path, draft).returncode == 0
    for format_ in ("json", "skill"):  # every format: tests/catalog/test_catalog_escaping.py
        out = cli(tmp_path, "describe", "--format", format_)
        assert out.returncode == 0, (format_, out.stderr)
        text = assert_escaped(out)
        if format_ == "skill":  # Markdown: shown visibly
            assert all(shown in text for shown in SHOWN), text
        else:  # JSON: the encoder's \\u escapes, lossless
            assert any(HOSTILE in s for s in strings(json.loads(text))), format_
    # the project's own declared tools, in the committed catalogue files and their check
    (tmp_path / "loud.py").write_text(
        "from toolfoundry import tool\n\n\n@tool\ndef loud(word: str) -> str:\n"
        f"    {json.dumps('Shouts. ' + HOSTILE)}\n    return word\n",
        encoding="utf-8",
    )
    for name in ("SKILL.md",):
        wrote = cli(tmp_path, "catalog", "write", "--source", "loud.py", "--out", name)
        assert wrote.returncode == 0, wrote.stderr
        written = (tmp_path / name).read_text(encoding="utf-8")
        for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
            assert raw not in written, (name, raw)
        assert "\\x1b[1A" in written or "\\u001b[1A" in written, written
        checked = cli(tmp_path, "catalog", "check", "--source", "loud.py", "--out", name)
        assert checked.returncode == 0, checked.stderr
