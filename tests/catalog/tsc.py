"""The real TypeScript compiler over generated declarations and snippets that use them.

``tsc`` is npm ``typescript`` at the version jsbuild/typecheck/package-lock.json pins, installed
by scripts/setup.sh. A missing compiler fails the test (it never skips): a type check that
does not run proves nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

TYPECHECK = Path(__file__).resolve().parents[2] / "jsbuild" / "typecheck"
TSC = TYPECHECK / "node_modules" / ".bin" / "tsc"
COMPILER_OPTIONS = {
    "strict": True,
    "noEmit": True,
    "target": "es2022",
    "lib": ["es2022"],
    "module": "es2022",
    "types": [],
}
_DIAGNOSTIC = re.compile(r"^(?P<file>[^(\n]+)\((?P<line>\d+),\d+\): error (?P<code>TS\d+): ")


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    code: str
    text: str


@dataclass(frozen=True)
class Checked:
    returncode: int
    output: str

    @property
    def diagnostics(self) -> list[Diagnostic]:
        found = []
        for line in self.output.splitlines():
            match = _DIAGNOSTIC.match(line)
            if match:
                name = Path(match["file"]).name
                found.append(Diagnostic(name, int(match["line"]), match["code"], line))
        return found

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.diagnostics


def typecheck(folder: Path, files: dict[str, str]) -> Checked:
    """Write ``files`` (name -> text, UTF-8) into ``folder`` and run ``tsc -p`` over them with
    ``--strict`` and ``--noEmit``."""
    if not TSC.exists():
        pytest.fail(f"{TSC} is missing: run scripts/setup.sh (npm ci in jsbuild/typecheck)")
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_bytes(text.encode("utf-8"))
    config = {"compilerOptions": COMPILER_OPTIONS, "files": sorted(files)}
    (folder / "tsconfig.json").write_text(json.dumps(config), encoding="utf-8")
    ran = subprocess.run(
        [str(TSC), "-p", str(folder), "--pretty", "false"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return Checked(ran.returncode, ran.stdout + ran.stderr)
