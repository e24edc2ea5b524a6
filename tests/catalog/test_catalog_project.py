"""A project's own declared tools (``[catalog]`` in toolfoundry.toml) through the CLI:
``catalog write`` then ``check``, drift on a change to the user's code, ``describe``, and the
configuration errors, in a copy of ``shop_project/`` (a @tool function, a workflow, an argparse
parser with subcommands and a file source)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from tests.catalog.tsc import typecheck
from tests.factories import error_of

from toolfoundry.catalog import render
from toolfoundry.cli import main
from toolfoundry.config import ConfigError
from toolfoundry.foundry.meta_tools import builtin_specs
from toolfoundry.project import Project

SAMPLE = Path(__file__).parent / "shop_project"
OWN = ["price", "report", "restock", "stock_count", "stock_move"]
FILES = ["docs/catalog.json", "docs/SKILL.md", "docs/skills/shop/SKILL.md"]


def forget_sample_modules() -> None:
    """Drop the sample's modules, so the next command imports the files as they are now (as
    a new process would)."""
    for name in list(sys.modules):
        if name == "shop" or name.startswith(("shop.", "_toolfoundry_source_report")):
            del sys.modules[name]


def run(*args: str) -> Result:
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        forget_sample_modules()


def out_of_sync(path: str) -> str:
    return f"{path} is out of sync with the code; run 'toolfoundry catalog write'\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "shop"
    shutil.copytree(SAMPLE, root)
    monkeypatch.chdir(root)
    # The loader puts the project on sys.path; keep that to this test.
    monkeypatch.setattr(sys, "path", list(sys.path))
    # Edits within one second must not be hidden by a cached .pyc of the same size.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    yield root
    forget_sample_modules()


def names(listing: dict[str, Any]) -> list[str]:
    return [c["name"] for g in listing["groups"] for c in g["commands"]]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_write_then_check_covers_builtins_and_own_tools(project: Path) -> None:
    written = run("catalog", "write")
    assert written.exit_code == 0, written.output
    assert written.stdout == "".join(f"wrote {f}\n" for f in FILES)
    checked = run("catalog", "check")
    assert (checked.exit_code, checked.stdout, checked.stderr) == (0, "", "")

    listing = json.loads((project / "docs/catalog.json").read_text(encoding="utf-8"))
    assert sorted(names(listing)) == sorted([*(s.name for s in builtin_specs()), *OWN])
    commands = {c["name"]: c for g in listing["groups"] for c in g["commands"]}
    assert commands["restock"]["level"] == "workflow"
    assert commands["stock_move"]["parameters"][1]["enum"] == ["front", "back"]
    skill = (project / "docs/skills/shop/SKILL.md").read_text(encoding="utf-8")
    assert yaml.safe_load(skill.split("---\n")[1])["name"] == "shop"
    assert "stock_count" in skill
    assert "## Workflows" in skill or "restock" in skill


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("shop/tools.py", "Price of an item in the shop.", "Price of one item in the shop."),
        ("shop/tools.py", "quantity: int = 1", "quantity: int = 2"),
        ("shop/tools.py", 'Literal["EUR", "USD"]', 'Literal["EUR", "USD", "GBP"]'),
        ("shop/cli.py", 'choices=("front", "back")', 'choices=("front", "back", "top")'),
        ("scripts/report.py", 'period: str = "week"', 'period: str = "month"'),
    ],
    ids=["docstring", "default", "enum", "argparse-choices", "file-source-default"],
)
def test_a_change_in_the_user_s_code_is_drift(project: Path, file: str, old: str, new: str) -> None:
    assert run("catalog", "write").exit_code == 0
    edit(project / file, old, new)

    stale = run("catalog", "check")
    assert stale.exit_code == 1
    assert out_of_sync("docs/catalog.json") in stale.stderr
    assert set(stale.stderr.splitlines()) <= {out_of_sync(f).strip() for f in FILES}

    assert run("catalog", "write").exit_code == 0
    assert run("catalog", "check").exit_code == 0


def test_check_as_a_subprocess_sees_the_edit(project: Path) -> None:
    command = [sys.executable, "-m", "toolfoundry", "catalog"]
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run([*command, "write"], cwd=project, check=True, capture_output=True, env=env)
    ok = subprocess.run([*command, "check"], cwd=project, capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    edit(project / "shop/tools.py", "the currency of the price.", "the price's currency.")
    stale = subprocess.run(
        [*command, "check"], cwd=project, capture_output=True, text=True, env=env
    )
    assert stale.returncode == 1
    assert stale.stderr == "".join(out_of_sync(f) for f in FILES)


def test_describe_lists_the_project_s_tools(project: Path) -> None:
    listed = run("describe")
    assert listed.exit_code == 0, listed.output
    assert sorted(names(json.loads(listed.stdout))) == sorted(
        [*(s.name for s in builtin_specs()), *OWN]
    )
    mcp = json.loads(run("describe", "--format", "mcp").stdout)
    price = next(t for t in mcp["tools"] if t["name"] == "price")
    assert price["inputSchema"]["properties"]["currency"]["enum"] == ["EUR", "USD"]
    assert run("describe", "--format", "skill").stdout == render("skill", Project.load().specs())


def test_describe_typescript_types_the_project_s_and_the_registry_s_tools(project: Path) -> None:
    """``describe --format typescript`` over declared tools and a registry's active tools
    passes ``tsc --strict`` with a snippet using both, and refuses the snippet's mistakes."""
    from toolfoundry.foundry import Foundry

    url = f"sqlite:///{project / 'reg.db'}"
    with Foundry.open(url) as foundry:
        draft = {
            "name": "double",
            "description": "Double a number.",
            "parameters": {
                "type": "object",
                "properties": {"n": {"type": "number"}},
                "required": ["n"],
            },
            "code": "export const handler = ({ n }) => 2 * n;",
            "tests": [{"input": {"n": 2}, "expected": 4}],
        }
        assert foundry.create_tool(draft).status == "active"
    described = run("describe", "--format", "typescript", "--db", url)
    assert described.exit_code == 0, described.output
    snippet = """\
export async function handler(): Promise<unknown> {
  const d = await tools.double({ n: 2 });
  const p = await tools.price({ item: "apple", currency: "USD", quantity: d as number });
  return tools.call("restock", { item: "pear" });
  void p;
}
"""
    files = {"tools.d.ts": described.stdout, "snippet.ts": snippet}
    checked = typecheck(project / "ts-good", files)
    assert checked.ok, checked.output
    for wrong in ('currency: "GBP"', "tools.doubel(", 'n: "2"'):
        right = {"tools.doubel(": "tools.double(", 'n: "2"': "n: 2"}.get(wrong, 'currency: "USD"')
        bad = {**files, "snippet.ts": snippet.replace(right, wrong)}
        assert bad["snippet.ts"] != snippet
        assert not typecheck(project / "ts-bad", bad).ok, wrong


def test_source_option_replaces_the_configured_sources(project: Path) -> None:
    listed = run("describe", "--source", "shop.cli:build_parser")
    assert listed.exit_code == 0, listed.output
    own = set(names(json.loads(listed.stdout))) - {s.name for s in builtin_specs()}
    assert own == {"stock_count", "stock_move"}
    # the committed files hold all five: the narrower --source view is drift
    assert run("catalog", "write").exit_code == 0
    assert run("catalog", "check", "--source", "shop.tools").exit_code == 1


def test_config_option_from_another_folder(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = str(project / "toolfoundry.toml")
    written = run("catalog", "write", "--config", config)
    assert written.exit_code == 0, written.output
    # paths are the project's (relative to its toolfoundry.toml), not the working folder's
    assert f"wrote {project / 'docs/SKILL.md'}" in written.stdout
    assert not (elsewhere / "docs").exists()
    assert run("catalog", "check", "--config", config).exit_code == 0
    assert run("catalog", "check").exit_code == 1  # here: built-ins only, nothing committed


def test_out_lists_the_committed_files_with_their_formats(project: Path) -> None:
    (project / "toolfoundry.toml").write_text(
        '[catalog]\nsources = ["shop.tools"]\n'
        'out = ["tools.json", { path = "openai.json", format = "openai" },'
        ' { path = "skill/SKILL.md", skill_name = "shop-tools" }, "tools.d.ts"]\n'
    )
    written = run("catalog", "write")
    wrote = ["tools.json", "openai.json", "skill/SKILL.md", "tools.d.ts"]
    assert written.stdout == "".join(f"wrote {f}\n" for f in wrote)
    assert not (project / "docs").exists()
    # code mode's types, on request only: the declared tools, never the meta-tools
    types = (project / "tools.d.ts").read_text(encoding="utf-8")
    assert "  price(args: {" in types
    assert not any(f" {s.name}(" in types for s in builtin_specs())
    openai = json.loads((project / "openai.json").read_text(encoding="utf-8"))
    assert {t["function"]["name"] for t in openai} >= {"price", "restock"}
    skill = (project / "skill/SKILL.md").read_text(encoding="utf-8")
    assert yaml.safe_load(skill.split("---\n")[1])["name"] == "shop-tools"
    assert run("catalog", "check").exit_code == 0


@pytest.mark.parametrize(
    ("catalog", "message"),
    [
        ('sources = ["shop.nothing"]', "catalog source 'shop.nothing': cannot import shop.nothing"),
        (
            'sources = ["shop.tools:missing"]',
            "catalog source 'shop.tools:missing': shop.tools has no attribute 'missing'",
        ),
        (
            'sources = ["shop.tools:PRICES"]',
            "catalog source 'shop.tools:PRICES': a dict is not a tool",
        ),
        (
            'sources = ["shop.tools:Restock"]',
            "catalog source 'shop.tools:Restock': 'Restock' needs arguments",
        ),
        ('sources = ["shop.cli"]', "catalog source 'shop.cli': the module declares no tools"),
        ('sources = ["scripts/nope.py"]', "catalog source 'scripts/nope.py': no such file"),
        (
            'sources = ["shop.tools", "shop/tools.py:price"]',
            "catalog source 'shop/tools.py:price': tool 'price' is already declared by "
            "catalog source 'shop.tools'",
        ),
        ('sources = "shop.tools"', "catalog.sources must be a list of non-empty strings"),
        ('out = ["tools.txt"]', "catalog.out[0]: give a format"),
        ('skill_name = "Shop Tools"', "catalog.skill_name must be lowercase letters"),
        ("colour = 1", "unknown key catalog.colour"),
    ],
)
def test_configuration_errors_name_the_source(project: Path, catalog: str, message: str) -> None:
    (project / "toolfoundry.toml").write_text(f"[catalog]\n{catalog}\n")
    for command in (("catalog", "check"), ("catalog", "write"), ("describe",)):
        result = run(*command)
        assert result.exit_code == 2
        assert message in result.stderr
        assert "Traceback" not in result.output


def test_a_declaration_error_at_import_names_the_source(project: Path) -> None:
    (project / "shop/bad.py").write_text(
        "from toolfoundry import tool\n\n\n@tool\ndef untyped(x):\n    '''No types.'''\n"
    )
    with pytest.raises(ConfigError, match=r"catalog source 'shop.bad': cannot import shop.bad: "):
        Project.load(sources=["shop.bad"])
    forget_sample_modules()


def test_a_tool_named_like_a_meta_tool_is_refused(project: Path) -> None:
    (project / "shop/clash.py").write_text(
        "from toolfoundry import tool\n\n\n@tool\ndef run_js(code: str) -> str:\n"
        "    '''Not the real one.'''\n    return code\n"
    )
    with pytest.raises(ConfigError, match="'run_js' is already declared by the built-in"):
        Project.load(sources=["shop.clash"])
    forget_sample_modules()


def test_attribute_forms(project: Path) -> None:
    (project / "shop/lists.py").write_text(
        "from shop.cli import build_parser\nfrom shop.tools import price, restock\n\n"
        "TOOLS = [price, build_parser()]\nPARSER = build_parser()\n\n\n"
        "def everything():\n    return (restock, price)\n"
    )
    assert [t.spec.name for t in Project.load(sources=["shop.lists:TOOLS"]).tools] == [
        "price",
        "stock_count",
        "stock_move",
    ]
    forget_sample_modules()
    parser = Project.load(sources=["shop.lists:PARSER"]).tools
    assert [t.spec.name for t in parser] == ["stock_count", "stock_move"]
    forget_sample_modules()
    returned = Project.load(sources=["shop.lists:everything", "shop.tools:price"]).tools
    assert [t.spec.name for t in returned] == ["restock", "price"]  # the same price once
    forget_sample_modules()
    # a module scan takes what the module imported too, once each
    scanned = Project.load(sources=["shop.lists"]).tools
    assert [t.spec.name for t in scanned] == ["price", "restock"]
    forget_sample_modules()


def test_declared_tools_are_called_through_their_own_declaration(project: Path) -> None:
    tools = {t.spec.name: t for t in Project.load().tools}
    forget_sample_modules()
    assert tools["price"].call({"item": "pear", "quantity": 2}).value == {
        "item": "pear",
        "total": 1.5,
        "currency": "EUR",
    }
    assert error_of(tools["price"].call({"item": "pear", "currency": "JPY"})).kind == (
        "invalid_arguments"
    )
    assert tools["stock_move"].call({"item": "pear", "to": "back"}).value == {
        "moved": "pear",
        "to": "back",
    }
    flow = tools["restock"].call({"item": "apple", "amount": 3})
    assert flow.ok
    assert flow.value["outputs"]["ordered"] == ["3 x apple"]


def test_the_repository_s_own_configuration_keeps_the_builtins_catalogue() -> None:
    """toolfoundry's own toolfoundry.toml declares no sources: its catalogue is the built-ins,
    byte for byte the committed docs."""
    repo = Path(__file__).resolve().parents[2]
    project = Project.load(repo / "toolfoundry.toml")
    assert project.tools == ()
    assert [a.path for a in project.artifacts()] == [repo / f for f in FILES[:2]] + [
        repo / "docs/skills/toolfoundry/SKILL.md",
    ]
    for artifact in project.artifacts():
        assert artifact.path.read_text(encoding="utf-8") == artifact.render(project.specs())
