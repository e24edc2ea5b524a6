"""What the performance guards share (``tests.performance.interpreter``): a new interpreter
that reports, and a current registry for it to open.

They check behaviour, laziness (the names of modules loaded) and counts, never timings
(bench/ measures those).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolfoundry.registry import NewVersion, Registry, VersionStatus


def run_json(code: str, cwd: Path, stdin: str = "", args: Sequence[str] = ()) -> Any:
    """Run ``code`` in a new interpreter (``args`` are its ``sys.argv[1:]``); the JSON value
    its last stdout line prints."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_python(code: str, cwd: Path, stdin: str = "") -> list[object]:
    """Run ``code`` in a new interpreter; the JSON list its last stdout line prints."""
    loaded = run_json(code, cwd, stdin)
    assert isinstance(loaded, list)
    return loaded


def loaded_modules(code: str, watched: list[str], url: str) -> list[object]:
    """Which of ``watched`` a new interpreter has loaded after ``code`` (``URL`` is ``url``),
    run beside the registry file."""
    script = (
        f"import json, sys\nURL = {url!r}\n{code}\n"
        f"print(json.dumps([m for m in {watched!r} if m in sys.modules]))\n"
    )
    return run_python(script, Path(url.removeprefix("sqlite:///")).parent)


def current_registry(directory: Path) -> str:
    """A SQLite registry at the current schema (so a child opens it without migrating) with
    one active JS tool, ``trim``; its URL."""
    url = f"sqlite:///{directory / 'registry.db'}"
    registry = Registry.open(url)
    registry.add_version(
        NewVersion(
            name="trim",
            code="export function handler({ text }) { return text.trim() }",
            description="Trims its text.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            status=VersionStatus.ACTIVE,
        )
    )
    registry.close()
    return url
