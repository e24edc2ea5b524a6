"""The bundled libraries and polyfills through the real sandbox (QuickJS-NG in wasmtime).

These are the checks that matter: the same cases as the Node suite, run by `run_js` exactly as a
tool's code would be, with the engine loading each library from the manifest when it is named.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolfoundry.sandbox import run_js
from toolfoundry.spec import ErrorKind


def test_library_import_form_does_real_work(built: Path, lib_case: tuple[str, str, Any]) -> None:
    _, source, expected = lib_case
    result = run_js(source)
    assert result.ok, result.error
    assert result.value == expected


def test_polyfill(built: Path, polyfill_case: tuple[str, str, Any]) -> None:
    _, expression, expected = polyfill_case
    result = run_js(f"export default {expression};")
    assert result.ok, result.error
    assert result.value == expected


def test_tool_handler_uses_several_libraries(built: Path) -> None:
    code = """
import yaml from "js-yaml";
import Decimal from "decimal.js";
import Papa from "papaparse";
export async function handler({ csv }) {
  const rows = Papa.parse(csv, { header: true, skipEmptyLines: true }).data;
  const total = rows.reduce((sum, r) => sum.plus(r.price), new Decimal(0));
  return yaml.dump({ items: rows.length, total: total.toFixed(2) });
}
"""
    result = run_js(code, {"csv": "item,price\na,0.10\nb,0.20\n"})
    assert result.ok, result.error
    assert result.value == "items: 2\ntotal: '0.30'\n"


def test_libraries_are_not_globals(built: Path) -> None:
    names = ["Decimal", "jsyaml", "dayjs", "Papa", "marked", "XMLParser", "Diff", "JSONPath"]
    result = run_js(f"export default {names!r}.filter((n) => n in globalThis);")
    assert result.ok, result.error
    assert result.value == []


def test_unbundled_package_fails_clearly(built: Path) -> None:
    result = run_js('import leftPad from "left-pad";\nexport default leftPad("x", 3);')
    assert not result.ok
    assert result.error is not None
    assert result.error.kind == ErrorKind.RUNTIME_ERROR
    assert "left-pad" in result.error.message
