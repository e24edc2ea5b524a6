"""The CLI's answers to a person's small mistakes: each names the fix, in these exact words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.cli.options import login_name

WORD_COUNT = {
    "name": "word_count",
    "description": "Count the words of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "code": "export const handler = ({ text }) => text.split(/\\s+/).filter(Boolean).length",
    "tests": [{"input": {"text": "one two  three"}, "expected": 3}],
}

WEATHER = {
    "name": "weather",
    "description": "Current temperature for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "code": (
        "export async function handler({ city }) {\n"
        "  return (await (await fetch('https://api.example.com/w?city=' + city)).json()).temp;\n"
        "}\n"
    ),
    "capabilities": {"network": ["api.example.com"]},
    "fixtures": [{"url": "https://api.example.com/w?city=Oslo", "body": '{"temp": -3}'}],
    "tests": [{"input": {"city": "Oslo"}, "expected": -3}],
}


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLFOUNDRY_DB", raising=False)
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url) as fd:
        assert fd.create_tool(WORD_COUNT).status == "active"
        assert fd.create_tool(WEATHER).status == "pending_approval"
    return url


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


def last_error(result: Result) -> str:
    return result.stderr.rstrip("\n").splitlines()[-1]


def test_args_from_a_file_past_what_a_command_line_holds(db: str, tmp_path: Path) -> None:
    text = "word " * 60_000  # 300 KB: more than one argument of a command line may be
    (tmp_path / "args.json").write_text(json.dumps({"text": text}), encoding="utf-8")
    result = run("call", "word_count", "--args", "@args.json", "--db", db)
    assert result.exit_code == 0, result.output
    assert result.stdout == "60000\n"


def test_args_from_stdin(db: str) -> None:
    result = run("call", "word_count", "--args", "-", "--db", db, stdin='{"text": "a b c"}')
    assert result.exit_code == 0, result.output
    assert result.stdout == "3\n"


@pytest.mark.parametrize(
    ("value", "stdin", "says"),
    [
        ("@nope.json", None, "cannot read nope.json: No such file or directory"),
        ("@bad.json", None, "not valid JSON (in bad.json): Expecting value at line 1 column 1"),
        ("-", '{"text": ', "not valid JSON (stdin): Expecting value at line 1 column 10"),
    ],
)
def test_args_that_cannot_be_read_say_where(
    db: str, tmp_path: Path, value: str, stdin: str | None, says: str
) -> None:
    (tmp_path / "bad.json").write_text("", encoding="utf-8")
    result = run("call", "word_count", "--args", value, "--db", db, stdin=stdin)
    assert result.exit_code == 2
    assert last_error(result) == f"Error: Invalid value for --args: {says}"


def test_json_given_positionally_is_shown_where_it_goes(db: str) -> None:
    result = run("call", "word_count", '{"text": "a b"}', "--db", db)
    assert result.exit_code == 2
    assert last_error(result) == (
        "Error: the tool's arguments go in --args: "
        """toolfoundry call word_count --args '{"text": "a b"}'"""
    )
    other = run("call", "word_count", "extra", "--db", db)
    assert last_error(other) == (
        "Error: unexpected extra argument 'extra': call takes one tool name, and the tool's "
        "arguments as JSON in --args (or --args @FILE, or --args - to read stdin)"
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["tool", "list"], "Error: No such command 'tool'. Did you mean 'tools'?"),
        (["serv"], "Error: No such command 'serv'. Did you mean 'serve'?"),
        (["tools", "lst"], "Error: No such command 'lst'. Did you mean 'list'?"),
    ],
)
def test_a_mistyped_command_gets_a_did_you_mean(args: list[str], says: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert last_error(result) == says


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["call", "word_cont"],
            "error (not_found): no tool 'word_cont'; did you mean 'word_count'?",
        ),
        (
            ["tools", "show", "Word_count"],
            "error (not_found): no tool 'Word_count'; did you mean 'word_count'?",
        ),
        (
            ["tools", "history", "word_coun"],
            "error (not_found): no tool named 'word_coun'; did you mean 'word_count'?",
        ),
        (["tools", "show", "zzz"], "error (not_found): no tool 'zzz'"),  # nothing close
        (
            ["tools", "show", "word_count", "--version", "9"],
            "error (not_found): no tool 'word_count' version 9",
        ),
    ],
)
def test_a_mistyped_tool_name_gets_a_did_you_mean(db: str, args: list[str], says: str) -> None:
    result = run(*args, "--db", db)
    assert result.exit_code == 1
    assert last_error(result) == says


def test_a_pending_tool_names_the_command_that_approves_it(db: str) -> None:
    result = run("call", "weather", "--args", '{"city": "Oslo"}', "--db", db)
    assert result.exit_code == 1
    assert last_error(result) == (
        "error (not_active): 'weather' version 1 is pending_approval: a person must approve it "
        "before it runs (toolfoundry approvals approve weather@1, or the review page)"
    )
    # and the command it names does that
    assert run("approvals", "approve", "weather@1", "--db", db).exit_code == 0


def test_a_call_typed_by_a_person_is_audited_as_that_person(db: str) -> None:
    assert run("call", "word_count", "--args", '{"text": "a"}', "--db", db).exit_code == 0
    with Foundry.open(db) as fd:
        fd.call("word_count", {"text": "b"})  # the Python API: a model's call, by default
    audit = run("tools", "audit", "--json", "--db", db)
    calls: list[dict[str, Any]] = [e for e in json.loads(audit.stdout) if e["event"] == "called"]
    assert [e["actor"] for e in calls] == [login_name(), "agent"]


@pytest.mark.parametrize(
    ("model", "module"), [("openai:gpt-4o-mini", "openai"), ("anthropic:claude-x", "anthropic")]
)
def test_a_missing_sdk_is_said_before_a_missing_key(db: str, model: str, module: str) -> None:
    script = (
        f"import sys; sys.modules[{module!r}] = None  # not installed\n"
        "from toolfoundry.cli import main\n"
        f"main(['agent', 'count the words', '--model', {model!r}, '--db', {db!r}])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 2
    assert out.stderr.splitlines()[-1] == (
        f"Error: an {module} model needs the [agents] extra: install toolfoundry[agents] "
        f"(pip install 'toolfoundry[agents]') (module '{module}' is missing)"
    )
