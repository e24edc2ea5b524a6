"""``toolfoundry agent`` shows what the model and its tools wrote, never lets it drive the
terminal: control characters escaped, rich markup shown as text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from click.testing import CliRunner

from toolfoundry.cli import main

from .conftest import answer, calls

if TYPE_CHECKING:
    from tests.agent.conftest import VendorServer

HOSTILE = "\x1b[1A\x1b[2K \x1b]52;c;ZXZpbA==\x07 \u202e [bold red]loud[/bold red]"


def test_model_text_tool_calls_and_results_are_shown_escaped(
    vendor: VendorServer, tmp_path: Path
) -> None:
    code = f"console.log({json.dumps(HOSTILE)}); export default {json.dumps(HOSTILE)}"
    vendor.play(
        calls("compat", ("run_js", {"code": code, "note": HOSTILE}), text=HOSTILE),
        answer("compat", HOSTILE),
    )
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "say it",
            "--model",
            "compat:m",
            "--base-url",
            vendor.base_url("compat"),
            "--db",
            f"sqlite:///{tmp_path / 'r.db'}",
        ],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in result.output, raw
    assert "[bold red]loud[/bold red]" in result.output  # shown, not applied
    assert "\\x1b[2K" in result.output
