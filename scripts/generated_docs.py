"""Write, or with --check compare, the documents generated from the code.

    python scripts/generated_docs.py            # write them (make docs)
    python scripts/generated_docs.py --check    # exit 1 naming each file that differs (make test)

- docs/openapi.json: the HTTP API's OpenAPI document, exactly as ``/api/openapi.json`` serves it
  (request and response schemas from ``toolfoundry.server.web``; the draft's from the forge);
- docs/cli.md: every command's ``--help``, from the click commands;
- README.md, between the cli-reference markers: the table of commands.

Like ``toolfoundry catalog check`` for the catalogue: these files are never edited by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from toolfoundry.cli import main as cli_main
from toolfoundry.cli.reference import command_table, full_reference
from toolfoundry.server.web.api import api_document

REPO = Path(__file__).resolve().parents[1]
BEGIN = (
    "<!-- cli-reference: begin (generated from the click commands by "
    "scripts/generated_docs.py; edit those, then run make docs) -->"
)
END = "<!-- cli-reference: end -->"
OUT_OF_SYNC = "{path} is out of sync with the code; run 'make docs' (scripts/generated_docs.py)"


class MarkersMissing(Exception):
    """A file whose generated block has no begin and end markers to replace."""


def openapi_text(_current: str | None) -> str:
    """docs/openapi.json."""
    return json.dumps(api_document(), indent=2, ensure_ascii=False) + "\n"


def cli_text(_current: str | None) -> str:
    """docs/cli.md."""
    return full_reference(cli_main)


def readme_text(current: str | None) -> str:
    """README.md with the table of commands between the markers replaced."""
    text = current or ""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise MarkersMissing(
            f"README.md needs the lines {BEGIN!r} and {END!r} around the table of commands"
        )
    return text[: start + len(BEGIN)] + "\n" + command_table(cli_main) + text[end:]


GENERATED: dict[str, Callable[[str | None], str]] = {
    "docs/openapi.json": openapi_text,
    "docs/cli.md": cli_text,
    "README.md": readme_text,
}


def run(root: Path, check: bool) -> int:
    """Write (or check) every generated file under ``root``; the exit status."""
    stale = []
    for name, render in GENERATED.items():
        path = root / name
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        try:
            wanted = render(current)
        except MarkersMissing as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            return 1
        if wanted == current:
            continue
        if check:
            stale.append(name)
            print(OUT_OF_SYNC.format(path=name), file=sys.stderr)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted, encoding="utf-8")
            print(f"wrote {name}")
    return 1 if stale else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository (default: this)")
    args = parser.parse_args(argv)
    return run(args.root, args.check)


if __name__ == "__main__":
    sys.exit(main())
