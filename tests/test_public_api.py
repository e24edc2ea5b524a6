"""The public entry points: ``__all__`` is exactly what each package offers, and typed.

The root package and ``toolfoundry.declare`` load their heavy names on first use (a module
``__getattr__`` over a ``_LAZY`` table); an ``if TYPE_CHECKING:`` import beside it gives type
checkers the real types, so a user's typo is a type error instead of ``Any``.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import toolfoundry

MYPY = Path(sys.executable).with_name("mypy")


def packages() -> list[str]:
    found = pkgutil.walk_packages(toolfoundry.__path__, "toolfoundry.")
    return ["toolfoundry", *(m.name for m in found if m.ispkg)]


def _tree(module: types.ModuleType) -> ast.Module:
    assert module.__file__ is not None
    return ast.parse(Path(module.__file__).read_text(encoding="utf-8"))


def _imported_from_elsewhere(module: types.ModuleType) -> set[str]:
    """Names the package binds by importing from outside itself (typing, other packages):
    what its own code uses, not what it offers."""
    own = module.__name__
    names: set[str] = set()
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.ImportFrom) and not node.level:
            source = node.module or ""
            if source != own and not source.startswith(own + "."):
                names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


@pytest.mark.parametrize("name", packages())
def test_all_is_exactly_what_the_package_offers(name: str) -> None:
    module = importlib.import_module(name)
    offered = list(getattr(module, "__all__", []))
    assert len(offered) == len(set(offered)), "a name listed twice"
    for attribute in offered:  # lazy names resolve too
        assert getattr(module, attribute) is not None, attribute
    elsewhere = _imported_from_elsewhere(module)
    public = {
        attribute
        for attribute, value in vars(module).items()
        if not attribute.startswith("_")
        and not isinstance(value, types.ModuleType)
        and attribute not in elsewhere
    }
    assert public <= set(offered), f"public but not in __all__: {sorted(public - set(offered))}"


def _lazy_packages() -> list[str]:
    return [name for name in packages() if "_LAZY" in vars(importlib.import_module(name))]


def test_the_lazy_packages_are_the_known_ones() -> None:
    assert {"toolfoundry", "toolfoundry.declare"} <= set(_lazy_packages())


@pytest.mark.parametrize("name", _lazy_packages())
def test_type_checkers_see_every_lazy_name_where_it_is_loaded_from(name: str) -> None:
    """The ``if TYPE_CHECKING:`` imports and the ``_LAZY`` table name the same things."""
    module = importlib.import_module(name)
    typed: dict[str, str] = {}
    for node in _tree(module).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                for alias in statement.names:
                    typed[alias.asname or alias.name] = statement.module or ""
    lazy: dict[str, str] = module._LAZY
    assert typed == lazy
    assert set(lazy) <= set(module.__all__)
    for attribute, source in lazy.items():
        assert getattr(module, attribute) is getattr(importlib.import_module(source), attribute)


def test_importing_the_package_stays_cheap() -> None:
    """The TYPE_CHECKING imports cost nothing at run time: no registry, sandbox or forge."""
    code = (
        "import sys, toolfoundry, toolfoundry.declare\n"
        "heavy = [m for m in ('sqlalchemy', 'wasmtime', 'toolfoundry.foundry', "
        "'toolfoundry.sandbox', 'toolfoundry.declare.function') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


USER_CODE = """\
    from toolfoundry import Foundry, run_js, tool

    fd = Foundry.open()
    result = fd.create_tool({"name": "slugify"})
    print(result.status)


    @tool
    def shout(text: str) -> str:
        \"\"\"Shout it.\"\"\"
        return text.upper()


    print(shout.spec.name, run_js("export function handler() { return 1 }").value)
"""

TYPOS = """\
    from toolfoundry import Foundry, run_js, tool

    Foundry.open().craete_tool({})


    @tool
    def shout(text: str) -> str:
        \"\"\"Shout it.\"\"\"
        return text.upper()


    shout.spec.nmae
    run_js(42)
"""


@pytest.mark.slow  # a cold mypy over toolfoundry and its dependencies: about 8 s
def test_mypy_strict_on_user_code_sees_the_real_types(tmp_path: Path) -> None:
    (tmp_path / "user_code.py").write_text(textwrap.dedent(USER_CODE), encoding="utf-8")
    (tmp_path / "typos.py").write_text(textwrap.dedent(TYPOS), encoding="utf-8")
    result = subprocess.run(
        [
            str(MYPY),
            "--strict",
            "--follow-imports=silent",  # report the user's files, not the library's insides
            "--cache-dir",
            str(tmp_path / "cache"),
            "user_code.py",
            "typos.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert errors == [
        'typos.py:3: error: "Foundry" has no attribute "craete_tool"; maybe "create_tool"?  '
        "[attr-defined]",
        'typos.py:12: error: "ToolSpec" has no attribute "nmae"  [attr-defined]',
        'typos.py:13: error: Argument 1 to "run_js" has incompatible type "int"; expected '
        '"str"  [arg-type]',
    ], result.stdout + result.stderr
    assert result.returncode == 1
