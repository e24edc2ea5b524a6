"""``toolfoundry serve``'s start-up: what it pauses, and what it does not import.

Each case runs in a new interpreter (tests/performance/interpreter.py, as
tests/performance/test_startup_imports.py does).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.performance.interpreter import current_registry, loaded_modules, run_python

# catalogue projections a server or a configuration does not render (catalog/formats.py loads
# each on first use; MCP's is catalog/mcp.py)
OTHER_FORMATS = [
    f"toolfoundry.catalog.{m}"
    for m in (
        "anthropic",
        "arguments",
        "describe_json",
        "gemini",
        "openai_chat",
        "openai_strict",
        "typescript",  # read with the types resource, a search hit's or show_tool's signature
        "typescript_types",
    )
]
CASES = {
    # reading toolfoundry.toml checks format names only: no projection, no schema validator
    "config": (
        "from toolfoundry.config import load_config\nload_config(None)",
        [*OTHER_FORMATS, "toolfoundry.base.json_schema", "jsonschema_rs"],
    ),
    # serve's set-up: the create path's test runner loads with the first create_tool
    "serve set-up": (
        "import toolfoundry.cli.serve\n"
        "from toolfoundry import Foundry\n"
        "from toolfoundry.server.mcp.server import build_mcp_server\n"
        "build_mcp_server(Foundry.open(URL))",
        [*OTHER_FORMATS, "toolfoundry.forge.testrun", "toolfoundry.forge.cases"],
    ),
}


@pytest.fixture(scope="module")
def current_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return current_registry(tmp_path_factory.mktemp("serve-startup"))


def test_start_up_pauses_the_collector_then_freezes_what_it_built(tmp_path: Path) -> None:
    code = (
        "import gc, json\n"
        "from toolfoundry.base.collector import gc_paused\n"
        "seen = []\n"
        "with gc_paused(freeze=True):\n"
        "    seen.append(gc.isenabled())\n"
        "    kept = [[i] for i in range(5000)]\n"
        "seen += [gc.isenabled(), gc.get_freeze_count() >= 5000]\n"
        "frozen = gc.get_freeze_count()\n"
        "gc.disable()\n"  # a caller that paused it itself: left alone, nothing frozen
        "with gc_paused(freeze=True):\n"
        "    pass\n"
        "seen += [gc.isenabled(), gc.get_freeze_count() == frozen]\n"
        "print(json.dumps(seen))\n"
    )
    assert run_python(code, tmp_path) == [False, True, True, False, True]


def test_serve_answers_with_the_collector_running_again(current_db: str, tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    code = (
        "import gc, json, sys\n"
        "from toolfoundry.cli import main\n"
        f"main(['serve', '--db', {current_db!r}], standalone_mode=False)\n"
        "print(json.dumps([gc.isenabled(), gc.get_freeze_count() > 50000]))\n"
    )
    assert run_python(code, tmp_path, json.dumps(initialize) + "\n") == [True, True]


@pytest.mark.parametrize("case", sorted(CASES))
def test_serve_and_config_load_only_what_they_need(case: str, current_db: str) -> None:
    code, forbidden = CASES[case]
    assert loaded_modules(code, forbidden, current_db) == []


def test_the_catalogue_renders_every_format_after_a_lazy_import(tmp_path: Path) -> None:
    """Each format's projection loads on its first render, in a process that loaded none."""
    code = (  # a registry tool too: the typescript format never declares the meta-tools
        "import json\n"
        "from toolfoundry.catalog.formats import FORMATS, render\n"
        "from toolfoundry.foundry.meta_tools import builtin_specs\n"
        "from toolfoundry.spec import ToolSpec\n"
        "specs = [*builtin_specs(), ToolSpec('word_count', 'Count the words of a text.')]\n"
        "print(json.dumps([f for f in FORMATS if 'word_count' not in render(f, specs)]))\n"
    )
    assert run_python(code, tmp_path) == []
