"""What the CLI's text output tells a person: the diff of a failing test in ``create``, how
many tests gated a version (its own and earlier versions'), and the stored suite in
``tools show`` (click's CliRunner, real sandbox, real database)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner, Result
from tests.shared_drafts import network_draft

from toolfoundry.cli import main

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit


Cli = Callable[..., Result]


@pytest.fixture
def cli(db_url: str) -> Cli:
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(main, [*args, "--db", db_url])

    return run


def write(tmp_path: Path, name: str, draft: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(draft))
    return str(path)


def test_a_failing_test_shows_expected_against_got(
    cli: Cli, kit: type[Kit], tmp_path: Path
) -> None:
    broken = kit.slugify(
        tests=[{"name": "basic", "input": {"text": "Hello World"}, "expected": "hello_world"}]
    )
    result = cli("create", write(tmp_path, "broken.json", broken))
    assert result.exit_code == 1
    out = result.stdout
    assert "test basic failed: the returned value differs from expected" in out
    assert "    --- expected\n    +++ actual\n" in out
    assert '    -"hello_world"\n    +"hello-world"' in out
    # the same diff --json carries
    as_json = json.loads(cli("create", write(tmp_path, "b.json", broken), "--json").stdout)
    assert as_json["test_results"][0]["diff"].splitlines()[-2:] == [
        '-"hello_world"',
        '+"hello-world"',
    ]


def test_the_step_message_counts_earlier_versions_tests(
    cli: Cli, kit: type[Kit], tmp_path: Path
) -> None:
    first = cli("create", str(kit.slugify_path))
    assert "all 2 test(s) passed; the tool is active" in first.stdout
    v2 = kit.slugify(
        code=kit.better,
        tests=[{"name": "trim", "input": {"text": "-a-"}, "expected": "a"}],
    )
    second = cli("create", write(tmp_path, "v2.json", v2))
    assert second.exit_code == 0, second.output
    assert "all 3 test(s) passed (1 own, 2 from earlier versions); the tool is active" in (
        second.stdout
    )


def test_tools_show_lists_the_suite_a_version_was_gated_by(
    cli: Cli, kit: type[Kit], tmp_path: Path
) -> None:
    cli("create", str(kit.slugify_path))
    v2 = kit.slugify(
        code=kit.better,
        tests=[{"name": "trim", "input": {"text": "-a-"}, "expected": "a"}],
        changes_tests=[{"test": "v1:punct", "reason": "commas are trimmed now"}],
    )
    assert cli("create", write(tmp_path, "v2.json", v2)).exit_code == 0
    shown = cli("tools", "show", "slugify")
    assert shown.exit_code == 0
    lines = shown.stdout.splitlines()
    start = lines.index("suite: 2 test(s) gated v2")
    assert lines[start + 1 : start + 4] == [
        '  v1:basic: {"text":"Hello World"} -> "hello-world"   passed',
        '  trim: {"text":"-a-"} -> "a"   passed',
        "  retired v1:punct: commas are trimmed now",
    ]
    first = cli("tools", "show", "slugify", "--version", "1").stdout
    assert "suite: 2 test(s) gated v1" in first
    assert '  punct: {"text":"a, b"} -> "a-b"   passed' in first


def test_tools_show_lists_error_cases_and_canned_answers(cli: Cli, tmp_path: Path) -> None:
    draft = {
        "name": "weather",
        "description": "Temperature of a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "code": (
            "export async function handler({ city }) {\n"
            "  if (!city) throw new Error('no city given');\n"
            "  const r = await fetch('https://api.example.com/w?city=' + city);\n"
            "  return (await r.json()).temp;\n"
            "}\n"
        ),
        "capabilities": {"network": ["api.example.com"]},
        "tests": [
            {
                "name": "oslo",
                "input": {"city": "Oslo"},
                "expected": -3,
                "fixtures": [
                    {"url": "https://api.example.com/w?city=Oslo", "body": '{"temp": -3}'}
                ],
            },
            {"name": "empty", "input": {"city": ""}, "error": "no city"},
        ],
        "fixtures": [
            {"url": "https://api.example.com/w?city=Bergen", "body": "\x1b[2J" + "x" * 300}
        ],
    }
    assert cli("create", write(tmp_path, "w.json", draft)).exit_code == 0
    out = cli("tools", "show", "weather").stdout
    assert '  oslo: {"city":"Oslo"} -> -3   passed' in out
    assert '      fixture GET https://api.example.com/w?city=Oslo -> 200 "{\\"temp\\": -3}"' in out
    assert '  empty: {"city":""} -> error containing "no city"   passed' in out
    every = next(line for line in out.splitlines() if "fixture (every test)" in line)
    assert "\x1b" not in every  # a canned body is shown escaped and cut
    assert every.endswith('... (304 characters)"')


def test_approvals_show_marks_new_capabilities_and_lists_the_suite(
    cli: Cli, tmp_path: Path
) -> None:
    draft = network_draft("weather", "api.example.com")
    assert cli("create", write(tmp_path, "v1.json", draft)).exit_code == 0
    assert cli("approvals", "approve", "weather@1", "--by", "alice").exit_code == 0
    draft["capabilities"]["network"].append("backup.example.com")
    draft["tests"][0]["name"] = "oslo again"
    assert cli("create", write(tmp_path, "v2.json", draft)).exit_code == 0
    out = cli("approvals", "show", "weather@2").stdout
    assert "  network backup.example.com [new since v1]: may send HTTP requests" in out
    assert "  network api.example.com: may send" in out
    assert '    v1:oslo: {"city":"Oslo"} -> -3   passed' in out
    assert '    oslo again: {"city":"Oslo"} -> -3   passed' in out
