"""The pip extras, read back from the installed metadata, and the one message for a missing one."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from toolfoundry.base.extras import MissingExtra, extras, missing_distributions, requires_extra

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
MESSAGE = re.compile(
    r"^.+ needs the \[(?P<x>[a-z-]+)\] extra: install toolfoundry\[(?P=x)\] "
    r"\(pip install 'toolfoundry\[(?P=x)\]'\)( \(module '[\w.]+' is missing\))?$"
)


def declared() -> dict[str, list[str]]:
    data = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    return dict(data["project"]["optional-dependencies"])


def test_extras_are_pyprojects() -> None:
    found = extras()
    # the installed metadata may lag an edited pyproject until `make setup` reinstalls
    assert {"server", "agents", "postgres", "all"} <= set(found) <= set(declared())
    assert "mcp" in found["server"]
    assert found["postgres"] == ["psycopg"]
    # "all" includes the extras it names
    assert set(found["server"]) | set(found["postgres"]) <= set(found["all"])


def test_every_extra_is_installed_in_the_dev_environment() -> None:
    for extra in ("server", "agents", "postgres"):
        assert missing_distributions(extra) == []


def test_the_message_is_one_line_naming_the_extra() -> None:
    error = MissingExtra("server", "toolfoundry serve", "mcp")
    assert MESSAGE.match(str(error)), str(error)
    assert error.extra == "server"
    assert error.name == "mcp"


def test_an_import_error_while_the_extra_is_installed_is_not_blamed_on_it() -> None:
    # the [server] extra is complete here: a module that no extra brings is another problem
    with pytest.raises(ModuleNotFoundError) as raised, requires_extra("server", "x"):
        import toolfoundry_no_such_module  # type: ignore[import-not-found]  # noqa: F401
    assert not isinstance(raised.value, MissingExtra)


def test_an_unknown_extra_is_reported_as_missing() -> None:
    expected = pytest.raises(MissingExtra, match=r"install toolfoundry\[nosuch\]")
    with expected, requires_extra("nosuch", "the feature"):
        import toolfoundry_no_such_module  # noqa: F401  (mypy reported it above)


def test_every_message_in_the_code_names_a_declared_extra() -> None:
    src = Path(__file__).resolve().parents[2] / "src"
    named = set()
    for path in src.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r'(?:requires_extra|MissingExtra)\(\s*"([a-z-]+)"', text))
    assert named, "no caller found"
    assert named <= set(declared()), named - set(declared())
