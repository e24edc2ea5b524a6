"""A missing or damaged sandbox is its own error kind everywhere, never a verdict on the code.

Each test damages a copy of the real ``_build/`` that this process then uses (see conftest):
the guest removed, a library altered, a file that differs from the wheel's record.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient
from tests.shared_drafts import word_count_draft

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.foundry.meta_tools import builtin_tools
from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.js import installation
from toolfoundry.server.app import create_app
from toolfoundry.server.mcp.results import call_tool_result
from toolfoundry.spec import ErrorKind

WORD_COUNT = word_count_draft()
# A case that expects an error containing a word the sandbox's own message also contains:
# judged on that message, it would pass.
EXPECTS_AN_ERROR = {
    **WORD_COUNT,
    "name": "needs_text",
    "tests": [{"input": {"text": ""}, "error": "missing"}],
}

Damage = Callable[[Path], str]


def remove_guest(root: Path) -> str:
    (root / "quickjs.wasm").unlink()
    return "the QuickJS guest"


def alter_library(root: Path) -> str:
    with (root / "libs" / "decimal_js.mjs").open("a") as out:
        out.write("\n// altered\n")
    return "the bundled library decimal.js"


def differ_from_record(root: Path) -> str:
    files = {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }
    (root / installation.RECORD_NAME).write_text(json.dumps({"files": files}))
    (root / "polyfills.js").write_text("/* not the polyfills */")
    return "polyfills.js is damaged"


DAMAGES = [remove_guest, alter_library, differ_from_record]


@pytest.fixture(params=DAMAGES, ids=lambda d: d.__name__)
def damaged(request: pytest.FixtureRequest, sandbox_copy: Callable[[], Path]) -> str:
    """Damage a copy of the sandbox; return a phrase the error must contain."""
    damage: Damage = request.param
    return damage(sandbox_copy())


def test_intact_copy_has_no_problems(sandbox_copy: Callable[[], Path]) -> None:
    sandbox_copy()
    assert installation.installed().problems() == []
    code = "export default new URL('https://a.test/x?y=1').searchParams.get('y')"
    assert run_js(code).value == "1"


def test_run_js_answers_sandbox_unavailable_with_the_fix(damaged: str) -> None:
    result = run_js("export default 1")
    assert result.error is not None
    assert result.error.kind is ErrorKind.SANDBOX_UNAVAILABLE
    assert damaged in result.error.message
    assert "fix: run `make setup`" in result.error.message  # this test runs from a checkout
    assert "\n" not in result.error.message


@pytest.mark.parametrize("draft", [WORD_COUNT, EXPECTS_AN_ERROR], ids=["expected", "error"])
def test_create_is_unavailable_and_stores_nothing(
    damaged: str, tmp_path: Path, draft: dict[str, Any]
) -> None:
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd:
        result = fd.create_tool(draft)
        assert result.status == "rejected"
        assert result.step.status == "unavailable"
        assert result.step.details["kind"] == "sandbox_unavailable"
        assert damaged in result.step.message
        assert "tests_failed" not in json.dumps(result.to_dict())
        assert result.test_results == ()
        assert fd.tools() == []


def test_cli_create_is_one_line_with_the_fix(damaged: str, tmp_path: Path) -> None:
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps(WORD_COUNT))
    result = CliRunner().invoke(main, ["create", str(draft), "--db", f"sqlite:///{tmp_path}/r.db"])
    assert result.exit_code == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("error (sandbox_unavailable): the sandbox cannot run: ")
    assert damaged in line
    assert "fix: " in line


def test_cli_create_json_names_the_kind(damaged: str, tmp_path: Path) -> None:
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps(WORD_COUNT))
    db = f"sqlite:///{tmp_path}/r.db"
    result = CliRunner().invoke(main, ["create", str(draft), "--db", db, "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["kind"] == "sandbox_unavailable"


def test_cli_js_run_is_one_line(damaged: str, tmp_path: Path) -> None:
    module = tmp_path / "m.js"
    module.write_text("export default 1;\n")
    result = CliRunner().invoke(main, ["js", "run", str(module)])
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("error (sandbox_unavailable): ")


def test_serve_refuses_to_start(damaged: str, tmp_path: Path) -> None:
    for extra in ([], ["--http", "127.0.0.1:1"]):
        result = CliRunner().invoke(main, ["serve", "--db", f"sqlite:///{tmp_path}/r.db", *extra])
        assert result.exit_code == 1
        (line,) = result.stderr.splitlines()
        assert line.startswith("Error: the sandbox cannot run: ")
        assert damaged in line
    assert not (tmp_path / "r.db").exists()


def test_meta_tools_answer_is_error_with_the_kind(damaged: str, tmp_path: Path) -> None:
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd:
        tools = {t.spec.name: t for t in builtin_tools(fd)}
        created = tools["create_tool"].call(WORD_COUNT)
        ran = tools["run_js"].call({"code": "export default 1"})
    for result in (created, ran):
        assert result.error is not None
        assert result.error.kind is ErrorKind.SANDBOX_UNAVAILABLE
        answer = call_tool_result(result, None)
        assert answer.is_error is True
        assert answer.structured_content == {"error": result.error.to_dict()}
        assert isinstance(answer.content[0], types.TextContent)
        assert answer.content[0].text.startswith("sandbox_unavailable: ")


def test_http_api_answers_503(damaged: str, tmp_path: Path) -> None:
    with (
        Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd,
        TestClient(create_app(fd), base_url="http://127.0.0.1:8000") as client,
    ):
        created = client.post("/api/tools", json=WORD_COUNT)
        assert created.status_code == 503
        assert created.json()["error"]["kind"] == "sandbox_unavailable"


def test_the_guest_cannot_claim_the_kind() -> None:
    # A script that throws an object shaped like the host's answer stays a runtime_error.
    code = 'export default (() => { throw {kind: "sandbox_unavailable", message: "x"}; })();'
    result = run_js(code)
    assert result.error is not None
    assert result.error.kind is ErrorKind.RUNTIME_ERROR


def test_doctor_names_the_damage_and_the_fix(damaged: str) -> None:
    result = CliRunner().invoke(main, ["doctor", "--json"])
    assert result.exit_code == 1
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["sandbox files"]["status"] == "failed"
    assert damaged in checks["sandbox files"]["detail"]
    assert "make setup" in checks["sandbox files"]["fix"]


def test_demo_refuses_in_one_line(damaged: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--db", f"sqlite:///{tmp_path}/d.db"])
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert line.startswith("Error: the sandbox cannot run: ")
