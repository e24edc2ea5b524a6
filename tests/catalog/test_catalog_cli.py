"""``toolfoundry describe`` and the drift check ``toolfoundry catalog write|check``, as users run
them: through click's CliRunner in a temporary project folder, and once as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from toolfoundry.catalog import FORMATS, render
from toolfoundry.catalog.drift import DEFAULT_ARTIFACTS, Artifact
from toolfoundry.cli import main
from toolfoundry.foundry.meta_tools import builtin_specs
from toolfoundry.project import installed_specs
from toolfoundry.spec import ToolSpec


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def out_of_sync(path: str) -> str:
    return f"{path} is out of sync with the code; run 'toolfoundry catalog write'\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_describe_defaults_to_json_of_the_installed_tools(project: Path) -> None:
    result = run("describe")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    names = sorted(s.name for s in installed_specs())
    assert sorted(c["name"] for g in data["groups"] for c in g["commands"]) == names
    assert data["tool_count"] == len(names)


@pytest.mark.parametrize("format", FORMATS)
def test_describe_prints_every_format(format: str, project: Path) -> None:
    result = run("describe", "--format", format)
    assert result.exit_code == 0
    assert result.stdout == render(format, installed_specs())


def test_describe_lists_the_registry_s_active_tools_too(project: Path) -> None:
    from toolfoundry.foundry import Foundry

    url = f"sqlite:///{project / 'reg.db'}"
    with Foundry.open(url) as foundry:
        created = foundry.create_tool(
            {
                "name": "double",
                "description": "Double a number.",
                "parameters": {"type": "object", "properties": {"n": {"type": "number"}}},
                "code": "export const handler = ({ n }) => 2 * n;",
                "tests": [{"input": {"n": 2}, "expected": 4}],
            }
        )
        assert created.status == "active"
    listed = json.loads(run("describe", "--db", url).stdout)
    names = [c["name"] for g in listed["groups"] for c in g["commands"]]
    assert "double" in names
    assert len(names) == len(builtin_specs()) + 1
    # Without --db and without ./.toolfoundry, only the built-ins, and no store is created.
    assert json.loads(run("describe").stdout)["tool_count"] == len(builtin_specs())
    assert not (project / ".toolfoundry").exists()
    # [registry] url chooses the store as it does for every other command.
    (project / "toolfoundry.toml").write_text(f'[registry]\nurl = "{url}"\n')
    assert json.loads(run("describe").stdout)["tool_count"] == len(builtin_specs()) + 1


def test_describe_refuses_an_unknown_format() -> None:
    result = run("describe", "--format", "yaml")
    assert result.exit_code == 2
    assert "'yaml' is not one of" in result.stderr


def test_builtins_are_in_the_catalogue() -> None:
    names = {s.name for s in builtin_specs()}
    assert {"create_tool", "search_tools", "tool_history", "rollback_tool", "run_js"} <= names


def test_check_fails_when_the_catalogue_is_missing(project: Path) -> None:
    result = run("catalog", "check")
    assert result.exit_code == 1
    assert result.stderr == "".join(out_of_sync(str(a.path)) for a in DEFAULT_ARTIFACTS)


def test_write_then_check_passes(project: Path) -> None:
    written = run("catalog", "write")
    assert written.exit_code == 0
    for artifact in DEFAULT_ARTIFACTS:
        assert f"wrote {artifact.path}" in written.stdout
        assert (project / artifact.path).is_file()
    checked = run("catalog", "check")
    assert (checked.exit_code, checked.stdout, checked.stderr) == (0, "", "")
    again = run("catalog", "write")
    assert "unchanged docs/SKILL.md" in again.stdout


@pytest.mark.parametrize("artifact", DEFAULT_ARTIFACTS, ids=lambda a: str(a.path))
def test_a_one_byte_change_fails_the_check(project: Path, artifact: Artifact) -> None:
    run("catalog", "write")
    path = project / artifact.path
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle] = ord("X") if data[middle] != ord("X") else ord("Y")
    path.write_bytes(bytes(data))

    result = run("catalog", "check")
    assert result.exit_code == 1
    assert result.stderr == out_of_sync(str(artifact.path))

    assert run("catalog", "write").exit_code == 0
    assert run("catalog", "check").exit_code == 0


def test_a_trailing_newline_alone_is_drift(project: Path) -> None:
    run("catalog", "write")
    path = project / "docs/catalog.json"
    path.write_bytes(path.read_bytes() + b"\n")
    assert run("catalog", "check").exit_code == 1


def test_out_writes_and_checks_one_file(project: Path) -> None:
    result = run("catalog", "write", "--out", "skills/tool-box/SKILL.md")
    assert result.exit_code == 0
    text = (project / "skills/tool-box/SKILL.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["name"] == "tool-box"  # a skill's name equals its folder
    assert run("catalog", "check", "--out", "skills/tool-box/SKILL.md").exit_code == 0

    assert run("catalog", "write", "--out", "mcp.json", "--format", "mcp").exit_code == 0
    listing = json.loads((project / "mcp.json").read_text(encoding="utf-8"))
    assert {t["name"] for t in listing["tools"]} == {s.name for s in builtin_specs()}
    assert run("catalog", "check", "--out", "mcp.json", "--format", "mcp").exit_code == 0
    assert run("catalog", "check", "--out", "mcp.json").exit_code == 1  # read as describe json


def test_out_with_an_unknown_suffix_needs_a_format(project: Path) -> None:
    result = run("catalog", "write", "--out", "tools.txt")
    assert result.exit_code == 2
    assert "cannot tell the format of tools.txt; pass --format" in result.stderr
    assert run("catalog", "check", "--format", "json").exit_code == 2


def test_check_as_a_subprocess(project: Path) -> None:
    command = [sys.executable, "-m", "toolfoundry", "catalog"]
    subprocess.run([*command, "write"], cwd=project, check=True, capture_output=True)
    ok = subprocess.run([*command, "check"], cwd=project, capture_output=True, text=True)
    assert ok.returncode == 0
    skill = project / "docs/SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace("tools", "tool", 1))
    stale = subprocess.run([*command, "check"], cwd=project, capture_output=True, text=True)
    assert stale.returncode == 1
    assert stale.stderr == out_of_sync("docs/SKILL.md")


def test_rendering_refuses_duplicate_names() -> None:
    one = ToolSpec("same", "First.")
    with pytest.raises(ValueError, match="'same' appears twice"):
        render("json", [one, ToolSpec("same", "Second.", group="g")])
