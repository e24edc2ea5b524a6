"""Start-up stays cheap: what the first request does not need is not imported.

Each entry point runs in a new interpreter, which prints the heavy modules it loaded. These
check laziness, not time (bench/bench_startup.py measures that): a top-level import added in
the wrong module shows up here as a name, with the module that must not load it.
"""

from __future__ import annotations

import pytest
from tests.performance.interpreter import current_registry, loaded_modules

# Loaded by none of the entry points below: the MCP SDK (serve imports it itself), the HTTP
# client stack (the first real fetch), Python jsonschema (base/json_schema is the validator),
# rich (a terminal table), Alembic (only when the schema is behind), PostgreSQL's dialect.
NEVER = [
    "mcp",
    "httpcore",
    "httpx",
    "jsonschema",
    "rich",
    "alembic",
    "uvicorn",
    "sqlalchemy.dialects.postgresql",
]

CASES = {
    # the command line itself: commands load when they are run
    "cli": ("import toolfoundry.cli", [*NEVER, "sqlalchemy", "pydantic", "wasmtime"]),
    # reading toolfoundry.toml: the policy and the limits, not the forge
    "config": (
        "from toolfoundry.config import load_config\nload_config(None)",
        [*NEVER, "sqlalchemy", "pydantic", "tree_sitter", "toolfoundry.forge.pipeline"],
    ),
    # the listing a script pipes: registry and printing only
    "tools list": (
        "from toolfoundry.cli import main\n"
        "main(['tools', 'list', '--db', URL], standalone_mode=False)",
        [*NEVER, "wasmtime"],
    ),
    # a script that opens the default SQLite registry and calls a tool: the driver, not SQLAlchemy
    "open and call": (
        "from toolfoundry import Foundry\n"
        "assert Foundry.open(URL).call('trim', {'text': ' a '}).value == 'a'",
        [*NEVER, "sqlalchemy", "pydantic", "tree_sitter", "toolfoundry.forge.pipeline"],
    ),
    # serve's work before it reads a request: the meta-tools are built
    "serve set-up": (
        "import toolfoundry.cli.serve\n"
        "from toolfoundry import Foundry\n"
        "from toolfoundry.foundry.meta_tools import builtin_tools\n"
        "builtin_tools(Foundry.open(URL))",
        [n for n in NEVER if n != "mcp"],
    ),
}


@pytest.fixture(scope="module")
def current_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return current_registry(tmp_path_factory.mktemp("startup"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_entry_point_loads_only_what_it_needs(case: str, current_db: str) -> None:
    code, forbidden = CASES[case]
    assert loaded_modules(code, forbidden, current_db) == []
