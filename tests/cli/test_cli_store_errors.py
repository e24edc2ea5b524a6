"""Every command that opens the registry reports an unusable store or configuration in one line.

The table below names every such command; the first test fails when a new command takes
``--db`` without being listed here, so the rest cover the whole CLI.
"""

import sqlite3
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from toolfoundry.cli import main

# command words -> arguments that get it as far as opening the store
STORE_COMMANDS: dict[str, tuple[str, ...]] = {
    "agent": ("task", "--model", "replay:demo"),
    "approvals approve": ("nosuch",),
    "approvals list": (),
    "approvals reject": ("nosuch", "--reason", "no"),
    "approvals show": ("nosuch",),
    "call": ("nosuch",),
    "create": ("draft.json",),
    "demo": (),
    "describe": (),
    "js run": ("draft.json",),  # with --db its tools reach the registry (code mode)
    "serve": (),
    "tools audit": (),
    "tools diff": ("nosuch", "1", "2"),
    "tools disable": ("nosuch",),
    "tools enable": ("nosuch",),
    "tools history": ("nosuch",),
    "tools list": (),
    "tools report": (),
    "tools rollback": ("nosuch", "1"),
    "tools search": ("slug",),
    "tools show": ("nosuch",),
    "tools usage": ("nosuch",),
    "tools verify": ("nosuch",),
    "upstream approve": ("notes.nosuch",),
    "upstream list": (),
    "upstream revoke": ("notes.nosuch", "--reason", "no"),
    "upstream show": ("notes.nosuch",),
}

# commands that take --db to report on the store, or to write it into a client's
# configuration, not to use it (tests/cli/test_cli_doctor.py, tests/cli/test_cli_mcp_install.py)
REPORTING_COMMANDS = {"doctor", "mcp install"}

# commands naming one tool, and how each is run against an empty registry
NAMED_TOOL_COMMANDS = [
    name for name, args in STORE_COMMANDS.items() if args[:1] == ("nosuch",) and name != "create"
]


def leaf_commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    ctx = click.Context(group)
    found: dict[str, click.Command] = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        words = f"{prefix}{name}"
        if isinstance(command, click.Group):
            found.update(leaf_commands(command, f"{words} "))
        else:
            found[words] = command
    return found


def options_of(command: click.Command) -> set[str]:
    return {opt for p in command.params for opt in getattr(p, "opts", [])}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLFOUNDRY_DB", raising=False)
    (tmp_path / "draft.json").write_text("{}", encoding="utf-8")
    return tmp_path


def invoke(words: str, *extra: str) -> Result:
    return CliRunner().invoke(main, [*words.split(), *STORE_COMMANDS[words], *extra])


def assert_one_line_error(result: Result, exit_code: int, says: str) -> None:
    assert result.exit_code == exit_code, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # not a crash
    assert "Traceback" not in result.output
    last = result.output.rstrip("\n").splitlines()[-1]
    assert says in last, result.output


def test_every_store_command_is_listed_and_takes_db_and_config() -> None:
    with_db = {
        words for words, command in leaf_commands(main).items() if "--db" in options_of(command)
    }
    assert with_db == set(STORE_COMMANDS) | REPORTING_COMMANDS
    for words in with_db:
        assert "--config" in options_of(leaf_commands(main)[words]), words


SUPPORTED_STORES = (
    "it keeps it in SQLite (a file path such as registry.db, or sqlite:///PATH) or PostgreSQL "
    "(postgresql://USER@HOST/DATABASE, with the [postgres] extra)"
)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (
            "bogus://x",
            f"bogus:// is not a store toolfoundry keeps its registry in; {SUPPORTED_STORES}",
        ),
        (
            "mysql://nobody@localhost/x",
            f"mysql:// is not a store toolfoundry keeps its registry in; {SUPPORTED_STORES}",
        ),
        (
            "postgresql+psycopg2://bob:secret@db.example/x",
            "postgresql+psycopg2:// asks for the psycopg2 driver; toolfoundry speaks to "
            "PostgreSQL with psycopg 3: write postgresql://bob:***@db.example/x",
        ),
    ],
)
@pytest.mark.parametrize("words", sorted(STORE_COMMANDS))
def test_unusable_db_url_is_a_one_line_failure(
    workdir: Path, words: str, url: str, says: str
) -> None:
    result = invoke(words, "--db", url)
    assert_one_line_error(result, 1, f"Error: cannot open the registry: {says}")
    assert "secret" not in result.output


@pytest.mark.parametrize("name", ["registry.db", "a #1?.db", "100%20.db"])
def test_a_bare_path_is_a_sqlite_file(workdir: Path, name: str) -> None:
    result = CliRunner().invoke(main, ["tools", "list", "--db", name])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in workdir.glob("*.db")) == [name]  # that file, named as given
    missing = CliRunner().invoke(main, ["tools", "list", "--db", f"no/such/{name}"])
    assert_one_line_error(
        missing, 1, "cannot open the registry: the directory of the SQLite database does not exist"
    )


@pytest.mark.slow
@pytest.mark.postgres
def test_postgres_scheme_is_postgresql(workdir: Path, pg_url: str) -> None:
    url = pg_url.replace("postgresql+psycopg://", "postgres://")
    made = CliRunner().invoke(main, ["tools", "list", "--json", "--db", url])
    assert made.exit_code == 0, made.output
    from toolfoundry import Foundry

    with Foundry.open(url) as foundry:
        assert foundry.registry.engine.dialect.name == "postgresql"


@pytest.mark.parametrize("words", sorted(STORE_COMMANDS))
def test_a_store_from_a_newer_version_is_a_one_line_failure(workdir: Path, words: str) -> None:
    future = workdir / "future.db"
    with sqlite3.connect(future) as conn:
        conn.execute("CREATE TABLE tf_alembic_version (version_num VARCHAR(32) NOT NULL)")
        conn.execute("INSERT INTO tf_alembic_version VALUES ('9999')")
    result = invoke(words, "--db", f"sqlite:///{future}")
    assert_one_line_error(result, 1, "Error: cannot open the registry: ")
    assert "schema revision '9999'" in result.output


@pytest.mark.parametrize("words", sorted(STORE_COMMANDS))
def test_a_file_that_is_not_a_database_is_a_one_line_failure(workdir: Path, words: str) -> None:
    garbage = workdir / "garbage.db"
    garbage.write_bytes(b"not a database, " * 64)
    result = invoke(words, "--db", f"sqlite:///{garbage}")
    assert_one_line_error(result, 1, "Error: cannot open the registry: ")
    assert "file is not a database" in result.output


@pytest.mark.parametrize(
    ("config", "says"),
    [(None, "no such configuration file"), ("limits = [", "not valid TOML")],
)
@pytest.mark.parametrize("words", sorted(STORE_COMMANDS))
def test_missing_or_invalid_config_is_a_usage_error(
    workdir: Path, words: str, config: str | None, says: str
) -> None:
    path = workdir / "toolfoundry.toml"
    if config is not None:
        path.write_text(config, encoding="utf-8")
    db = f"sqlite:///{workdir / 'r.db'}"
    result = invoke(words, "--db", db, "--config", str(path))
    assert_one_line_error(result, 2, says)
    assert not (workdir / "r.db").exists()  # refused before the store is touched


@pytest.mark.parametrize("words", NAMED_TOOL_COMMANDS)
def test_unknown_tool_is_a_one_line_failure(workdir: Path, words: str) -> None:
    result = invoke(words, "--db", f"sqlite:///{workdir / 'r.db'}")
    assert_one_line_error(result, 1, "error (not_found): no tool")


@pytest.mark.parametrize("words", NAMED_TOOL_COMMANDS)
def test_a_name_from_a_non_utf8_argv_byte_is_an_unknown_tool(
    workdir: Path, words: str, db_url: str
) -> None:
    # Python decodes a non-UTF-8 byte of argv to a lone surrogate, which no database driver
    # can encode: the registry binds names through one gate (schema.ToolNameText)
    args = ["no\udcffsuch" if a == "nosuch" else a for a in STORE_COMMANDS[words]]
    result = CliRunner().invoke(main, [*words.split(), *args, "--db", db_url])
    assert_one_line_error(result, 1, "error (not_found): no tool")
    assert "\udcff" not in result.output  # shown escaped, never raw


@pytest.mark.parametrize(
    "command", [["call", "nosuch"], ["js", "run", "tool.js"], ["executor", "run", "tool.py"]]
)
def test_args_that_are_not_json_are_a_usage_error(workdir: Path, command: list[str]) -> None:
    (workdir / "tool.js").write_text("export function handler() { return 1; }\n")
    (workdir / "tool.py").write_text("def handler(args):\n    return 1\n")
    db = f"sqlite:///{workdir / 'r.db'}"
    extra = ["--db", db] if command[0] == "call" else []
    result = CliRunner().invoke(main, [*command, "--args", "{", *extra])
    assert_one_line_error(result, 2, "Invalid value for --args: not valid JSON")


@pytest.mark.parametrize("words", sorted(STORE_COMMANDS))
def test_a_sqlite_file_in_a_missing_directory_is_refused(workdir: Path, words: str) -> None:
    missing = workdir / "no" / "such" / "dir"
    result = invoke(words, "--db", f"sqlite:///{missing / 'x.db'}")
    assert_one_line_error(result, 1, "Error: cannot open the registry: ")
    assert f"the directory of the SQLite database does not exist: {missing}" in result.output
    assert not (workdir / "no").exists()  # a typo is not turned into a new, empty registry


def test_the_default_store_is_made_once_and_said_so(workdir: Path) -> None:
    first = CliRunner().invoke(main, ["tools", "list"])
    assert first.exit_code == 0, first.output
    assert f"toolfoundry: created {workdir / '.toolfoundry'}/ for the registry" in first.stderr
    assert (workdir / ".toolfoundry" / "registry.db").is_file()
    again = CliRunner().invoke(main, ["tools", "list"])
    assert again.exit_code == 0, again.output
    assert "created" not in again.stderr
