"""The generated documents (docs/openapi.json, docs/cli.md, README.md's table of commands)
equal what the code renders, and ``scripts/generated_docs.py --check`` fails, naming the file,
as soon as one of them drifts."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from toolfoundry.cli import main
from toolfoundry.cli.reference import command_table, walk

REPO = Path(__file__).resolve().parents[1]
FILES = ("docs/openapi.json", "docs/cli.md", "README.md")
_spec = importlib.util.spec_from_file_location("generated_docs", REPO / "scripts/generated_docs.py")
assert _spec is not None
assert _spec.loader is not None
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)


@dataclass
class Outcome:
    returncode: int
    stderr: str


@pytest.fixture
def generate(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """Run the script's main as ``python scripts/generated_docs.py --root ROOT ...`` does."""

    def run(root: Path, *flags: str) -> Outcome:
        code = script.main(["--root", str(root), *flags])
        return Outcome(code, capsys.readouterr().err)

    return run


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, tmp_path / name)
    return tmp_path


def test_committed_documents_match_the_code(generate: Callable[..., Outcome]) -> None:
    result = generate(REPO, "--check")
    assert result.returncode == 0, result.stderr


def test_check_names_every_drifted_file_and_write_repairs_them(
    generate: Callable[..., Outcome], copy: Path
) -> None:
    api = copy / "docs/openapi.json"
    api.write_text(api.read_text().replace('"createTool"', '"makeTool"'))
    (copy / "docs/cli.md").unlink()
    readme = copy / "README.md"
    readme.write_text(readme.read_text().replace("| `toolfoundry tools usage NAME` |", "| x |"))

    result = generate(copy, "--check")
    assert result.returncode == 1
    for name in FILES:
        assert f"{name} is out of sync with the code; run 'make docs'" in result.stderr
    assert "makeTool" in api.read_text()  # --check writes nothing

    assert generate(copy).returncode == 0
    assert generate(copy, "--check").returncode == 0
    assert (copy / "README.md").read_text() == (REPO / "README.md").read_text()


def test_readme_without_markers_is_a_clear_error(
    generate: Callable[..., Outcome], copy: Path
) -> None:
    readme = copy / "README.md"
    readme.write_text(readme.read_text().replace("<!-- cli-reference: end -->", ""))
    result = generate(copy, "--check")
    assert result.returncode == 1
    assert "README.md needs the lines" in result.stderr


def test_readme_lists_every_command_that_runs() -> None:
    leaves = [doc for doc in walk(main) if not isinstance(doc.command, click.Group)]
    table = command_table(main)
    assert len(leaves) >= 27  # the README once listed 19 of them by hand
    for doc in leaves:
        assert f"| `{doc.usage()}` |" in table
    assert table in (REPO / "README.md").read_text(encoding="utf-8")
    assert "| `toolfoundry approvals reject NAME[@VERSION] --reason TEXT` |" in table


def test_cli_reference_shows_every_option_of_every_command() -> None:
    text = (REPO / "docs/cli.md").read_text(encoding="utf-8")
    for doc in walk(main):
        assert f"## `{doc.path}`" in text
        for param in doc.command.params:
            if isinstance(param, click.Option):
                assert param.opts[0] in doc.help(), (doc.path, param.opts)
    assert doc.help() in text
