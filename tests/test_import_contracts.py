"""The import contract in pyproject.toml ([tool.importlinter]) holds, and breaks on a violation.

``make lint`` runs ``lint-imports`` on the tree; these tests run the same command, and run it
on a copy of the package with one violation planted, to show each contract can fail and that
an import inside a function or under ``if TYPE_CHECKING:`` counts like any other.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "src" / "toolfoundry"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# Modules that sit outside the layers: the entry point that only starts the CLI.
OUTSIDE_LAYERS = {"__main__"}


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on ``root``'s pyproject.toml, with ``root/src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(root / "pyproject.toml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return found


def test_the_tree_keeps_every_contract() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(contracts())} kept, 0 broken." in result.stdout


def test_every_top_level_module_has_a_layer() -> None:
    """A new package (say ``integrations``' next sibling) must be placed in a layer."""
    [layers] = [c for c in contracts() if c["type"] == "layers"]
    named = set()
    for layer in layers["layers"]:  # type: ignore[attr-defined]
        for part in layer.replace(":", "|").split("|"):
            named.add(part.strip().strip("()").removeprefix("toolfoundry."))
    present = {
        p.stem if p.suffix == ".py" else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()
    }
    assert present - OUTSIDE_LAYERS <= named, "modules in no layer"
    assert named <= present, "layers naming nothing"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The package's Python files and the project's pyproject.toml, in a scratch tree."""

    def python_only(folder: str, names: list[str]) -> list[str]:
        skipped_dirs = ("__pycache__", "_build", "node_modules")
        return [
            n
            for n in names
            if n in skipped_dirs or not (n.endswith(".py") or (Path(folder) / n).is_dir())
        ]

    shutil.copytree(PACKAGE, tmp_path / "src" / "toolfoundry", ignore=python_only)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def plant(root: Path, module: str, code: str) -> None:
    path = root / "src" / Path(*module.split(".")).with_suffix(".py")
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(existing + "\n\n" + code, encoding="utf-8")


VIOLATIONS = {
    "a lower layer importing a higher one inside a function": (
        "toolfoundry.sandbox.policy",
        "def _late():\n    from toolfoundry.foundry import Foundry\n\n    return Foundry\n",
        "Layers, top to bottom",
        "toolfoundry.sandbox.policy -> toolfoundry.foundry",
    ),
    "a type-only import of a higher layer": (
        "toolfoundry.catalog.formats",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import toolfoundry.project\n",
        "Layers, top to bottom",
        "toolfoundry.catalog.formats -> toolfoundry.project",
    ),
    "two siblings of one layer importing each other": (
        "toolfoundry.server.changes",
        "def _agent():\n    import toolfoundry.agent.loop\n",
        "Layers, top to bottom",
        "toolfoundry.server.changes -> toolfoundry.agent.loop",
    ),
    "the registry reaching into the sandbox": (
        "toolfoundry.registry.faults",
        "def _policy():\n    from toolfoundry.sandbox.policy import SandboxPolicy\n",
        "The registry is persistence only",
        "toolfoundry.registry.faults -> toolfoundry.sandbox.policy",
    ),
    "SQL above the registry": (
        "toolfoundry.server.web.review",
        "def _sql():\n    from sqlalchemy import text\n\n    return text('SELECT 1')\n",
        "Only the registry speaks SQL",
        "toolfoundry.server.web.review -> sqlalchemy",
    ),
    "the call path reaching SQLAlchemy through the full registry": (
        "toolfoundry.registry.calls",
        "def _full():\n    from toolfoundry.registry.repository import Registry\n",
        "The call path imports no",
        "toolfoundry.registry.calls -> toolfoundry.registry.repository",
    ),
    "the call path naming pydantic for its types only": (
        "toolfoundry.foundry.call",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import pydantic\n",
        "The call path imports no",
        "toolfoundry.foundry.call -> pydantic",
    ),
    "the sandbox loading the forge": (
        "toolfoundry.sandbox.js.run",
        "def _draft():\n    import toolfoundry.forge.draft\n",
        "The call path imports no",
        "toolfoundry.sandbox.js.run -> toolfoundry.forge.draft",
    ),
    "a cycle inside one package": (
        "toolfoundry.spec.names",
        "def _back():\n    import toolfoundry.spec.tool\n",
        "No cycles",
        "No cycles are allowed in toolfoundry.spec.",
    ),
}


@pytest.mark.parametrize("violation", VIOLATIONS, ids=list(VIOLATIONS))
def test_a_planted_violation_breaks_its_contract(copy: Path, violation: str) -> None:
    module, code, contract, shown = VIOLATIONS[violation]
    assert shown not in lint_imports(copy).stdout
    plant(copy, module, code)
    result = lint_imports(copy)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert contract in broken
    assert shown in broken
