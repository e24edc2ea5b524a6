"""Intl in the sandbox gives Node's output: the recorded table, the differences, the lazy loading.

Node's values are recorded in intl_cases.py (Node 20.20.2, ICU 78.2); when the machine's Node has
that ICU, its output is checked against the table too, so the table cannot drift from Node.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.factories import McpSessionFactory
from tests.jslibs.intl_cases import CASES, DIFFERENCES, NODE_ICU, node_values

from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.host.storage import StorageHook, StorageQuota
from toolfoundry.sandbox.js.engine import Limits
from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.sandbox.js.modules import LibraryCatalog
from toolfoundry.sandbox.js.wasm_engine import default_engine
from toolfoundry.sandbox.policy import SandboxPolicy

CURRENCY = 'new Intl.NumberFormat("de-DE", {style: "currency", currency: "EUR"}).format(1234.5)'
EPOCH_DATE = 'new Date(0).toLocaleDateString("en-US", {timeZone: "UTC"})'


def in_sandbox(expressions: list[str]) -> list[Any]:
    """Every expression evaluated in one sandbox call (an error gives {"error": its name})."""
    thunks = ",\n".join(f"() => ({e})" for e in expressions)
    code = f"""
const cases = [{thunks}];
export default cases.map((run) => {{
  try {{ return {{ value: JSON.parse(JSON.stringify(run())) }}; }}
  catch (e) {{ return {{ error: e.name }}; }}
}});
"""
    result = run_js(code, None, SandboxPolicy(timeout_s=120))
    assert result.ok, result.error
    assert isinstance(result.value, list)
    return result.value


@pytest.fixture(scope="module")
def sandbox_values(built: Path) -> dict[str, Any]:
    expressions = [*CASES, *DIFFERENCES]
    return dict(zip(expressions, in_sandbox(expressions), strict=True))


@pytest.fixture(scope="module")
def node_now(node: str) -> dict[str, Any]:
    icu, values = node_values(node, [*CASES, *DIFFERENCES])
    if icu != NODE_ICU:
        pytest.skip(f"this Node has ICU {icu}; the table was recorded with ICU {NODE_ICU}")
    return values


@pytest.mark.parametrize("expression", list(CASES))
def test_sandbox_gives_nodes_output(sandbox_values: dict[str, Any], expression: str) -> None:
    assert sandbox_values[expression] == {"value": CASES[expression]}


@pytest.mark.parametrize("expression", list(CASES))
def test_table_is_nodes_output(node_now: dict[str, Any], expression: str) -> None:
    assert node_now[expression] == CASES[expression]


@pytest.mark.parametrize("expression", list(DIFFERENCES))
def test_known_difference_is_as_documented(sandbox_values: dict[str, Any], expression: str) -> None:
    _, sandbox, _ = DIFFERENCES[expression]
    assert sandbox_values[expression] == {"value": sandbox}


@pytest.mark.parametrize("expression", list(DIFFERENCES))
def test_known_difference_is_nodes_output(node_now: dict[str, Any], expression: str) -> None:
    node_value, sandbox, _ = DIFFERENCES[expression]
    assert node_now[expression] == node_value != sandbox


def test_every_documented_difference_is_in_the_docs() -> None:
    doc = " ".join(
        (Path(__file__).resolve().parents[2] / "docs" / "js-libraries.md").read_text().split()
    )
    for _, _, why in DIFFERENCES.values():
        assert why in doc, why


@pytest.mark.parametrize("expression", [CURRENCY, EPOCH_DATE])
def test_run_js_equals_node(built: Path, node: str, expression: str) -> None:
    _, values = node_values(node, [expression])
    result = run_js(f"export default {expression};")
    assert result.ok, result.error
    assert result.value == values[expression] == CASES[expression.replace('"', "'")]


def test_js_run_cli_equals_node(built: Path, node: str, tmp_path: Path) -> None:
    script = tmp_path / "intl.js"
    script.write_text(f"export function handler() {{\n  return [{CURRENCY}, {EPOCH_DATE}];\n}}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "toolfoundry", "js", "run", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    _, values = node_values(node, [CURRENCY, EPOCH_DATE])
    assert json.loads(proc.stdout) == [values[CURRENCY], values[EPOCH_DATE]]


def test_mcp_run_js_equals_node(
    built: Path, node: str, tmp_path: Path, mcp_session: McpSessionFactory
) -> None:
    """The check a model makes: `run_js` over MCP with the official client."""
    _, values = node_values(node, [CURRENCY, EPOCH_DATE])

    async def scenario() -> list[Any]:
        async with mcp_session(f"sqlite:///{tmp_path / 'r.db'}", tmp_path) as (session, _):
            out = []
            for expression in (CURRENCY, EPOCH_DATE):
                called = await session.call_tool(
                    "run_js", {"code": f"export default {expression};"}
                )
                assert called.structured_content is not None
                assert called.structured_content["ok"], called.structured_content
                out.append(called.structured_content["value"])
            return out

    assert anyio.run(scenario) == [values[CURRENCY], values[EPOCH_DATE]]


class RecordingCatalog(LibraryCatalog):
    """The real catalog, noting which parts of Intl a call asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def intl(self, name: str) -> str | None:
        self.asked.append(name)
        return super().intl(name)


def parts_loaded(code: str) -> tuple[Any, list[str]]:
    catalog = RecordingCatalog()
    deadline = time.monotonic() + 60
    host = CallHost(
        fetch=None,
        storage=StorageHook(None, "intl", StorageQuota()),
        libraries=catalog,
        log_lines=10,
        log_bytes=1000,
        deadline=deadline,
    )
    limits = Limits(deadline=deadline, memory_bytes=64 << 20, output_bytes=1 << 20)
    result = default_engine().run(code, {}, limits, host)
    assert result.ok, result.error
    return result.value, catalog.asked


@pytest.mark.parametrize(
    ("code", "expected", "parts"),
    [
        (
            "export default [typeof Intl, (1.5).toFixed(2), String(new Date(0).getTime())]",
            ["object", "1.50", "0"],
            [],
        ),
        ("export default Object.keys(Intl).length", 0, []),
        (
            "export default ['b', 'a'].sort((x, y) => x.localeCompare(y))",
            ["a", "b"],
            ["runtime", "collator"],
        ),
        (
            "export default (12.5).toLocaleString('de-DE')",
            "12,5",
            ["runtime", "core", "numberformat/de", "pluralrules/de"],
        ),
        (
            "export default new Date(0).toLocaleDateString('en-US', {timeZone: 'Europe/Paris'})",
            "1/1/1970",
            None,
        ),
    ],
    ids=["untouched", "keys", "localeCompare", "number", "date"],
)
def test_intl_loads_only_what_a_call_uses(
    built: Path, code: str, expected: Any, parts: list[str] | None
) -> None:
    value, asked = parts_loaded(code)
    assert value == expected
    if parts is not None:
        assert sorted(asked) == sorted(parts)
    else:  # a date in a named zone: its own transitions, no other zone's
        assert {"runtime", "core", "datetimeformat/en", "tz", "tz/Europe/Paris"} <= set(asked)
        assert [p for p in asked if p.startswith("tz/")] == ["tz/Europe/Paris"]


def test_intl_state_does_not_leak_between_calls(built: Path) -> None:
    spoil = run_js(
        "Intl.NumberFormat = null; Number.prototype.toLocaleString = () => 'x';"
        " export default (1).toLocaleString()"
    )
    assert spoil.value == "x"
    result = run_js("export default [typeof Intl.NumberFormat, (1234).toLocaleString()]")
    assert result.value == ["function", "1,234"]


def test_intl_constructors_behave_like_builtins(built: Path) -> None:
    code = """
const nf = new Intl.NumberFormat("en");
export default [
  nf instanceof Intl.NumberFormat,
  Intl.NumberFormat("en").format(1),
  Object.prototype.toString.call(Intl),
  Intl.NumberFormat.name,
  Number.prototype.toLocaleString.length,
  String.prototype.localeCompare.length,
  Intl.DateTimeFormat.supportedLocalesOf(["en-GB", "tlh", "de-AT"]),
  Intl.getCanonicalLocales(["EN-us", "zh-hant-tw", "de-DE-u-nu-latn-ca-gregory"]),
  new Intl.DateTimeFormat("en", { timeZone: "utc" }).resolvedOptions().timeZone,
];
"""
    result = run_js(code)
    assert result.ok, result.error
    assert result.value == [
        True,
        "1",
        "[object Intl]",
        "NumberFormat",
        0,
        1,
        ["en-GB", "de-AT"],
        ["en-US", "zh-Hant-TW", "de-DE-u-ca-gregory-nu-latn"],
        "UTC",
    ]


@pytest.mark.parametrize(
    "code",
    [
        "new Intl.NumberFormat('\\ud800')",
        "new Intl.NumberFormat('en', { maximumFractionDigits: 1e9 })",
        "new Intl.NumberFormat([{ toString() { throw new RangeError('no') } }])",
        "new Intl.DateTimeFormat('en', { timeZone: '../../etc/passwd' })",
        "new Intl.DateTimeFormat('en', { timeZone: 'A'.repeat(100000) })",
        "Intl.getCanonicalLocales('x'.repeat(100000))",
        "new Intl.NumberFormat('en').format(10n ** 400n)",
    ],
)
def test_hostile_values_fail_cleanly_or_work(built: Path, code: str) -> None:
    result = run_js(
        f"let out; try {{ out = String({code}); }} catch (e) {{ out = e.name; }}"
        " export default out;"
    )
    assert result.ok, result.error
    assert isinstance(result.value, str)
    if "400n" in code:
        assert result.value.startswith("10,000,000")
    else:
        assert result.value == "RangeError"
