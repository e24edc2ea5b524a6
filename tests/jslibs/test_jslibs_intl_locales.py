"""What a model is told about Intl's locales, and whether it is true: every constructor's
``supportedLocalesOf`` names only the locales it serves, create_tool's description lists the
locales with data (from the manifest), and a draft that formats with a locale without data
gets a located warning, in its code or in its tests, over MCP as through the Python API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from tests.server.mcp.test_mcp_support import stdio_session

from toolfoundry import Foundry
from toolfoundry.foundry.meta_tools import builtin_specs
from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.js.intl_parts import IntlLocales
from toolfoundry.sandbox.js.modules import MANIFEST

ASKED = ["sw-KE", "ar-EG", "de-DE", "en-GB", "fr", "de-LU", "zz", "tlh"]


def test_every_constructor_names_only_the_locales_it_serves() -> None:
    code = f"""
const asked = {ASKED!r};
export default Object.fromEntries(
  ["Collator", "DateTimeFormat", "ListFormat", "NumberFormat", "PluralRules", "RelativeTimeFormat"]
    .map((name) => [name, Intl[name].supportedLocalesOf(asked)]),
);
"""
    result = run_js(code)
    assert result.ok, result.error
    served = result.value
    for name, locales in served.items():
        assert not {"sw-KE", "ar-EG", "zz", "tlh"} & set(locales), name
        assert {"de-DE", "fr"} <= set(locales), name
    # and the answer is what formatting does: a locale left out formats as en-US
    check = run_js(
        "export default [(1234.5).toLocaleString('sw-KE'), (1234.5).toLocaleString('en-US'),"
        " new Intl.NumberFormat('ar-EG').resolvedOptions().locale];"
    )
    assert check.value == ["1,234.5", "1,234.5", "en-US"]


def test_create_tool_lists_the_locales_with_data() -> None:
    create = next(s for s in builtin_specs() if s.name == "create_tool")
    locales = IntlLocales.read(MANIFEST).names()
    assert len(locales) > 20
    line = next(x for x in create.description.splitlines() if x.startswith("Intl has locale"))
    assert line.startswith("Intl has locale data for " + ", ".join(sorted(locales)))
    assert "formats as en-US" in line
    assert "supportedLocalesOf" in line


PARAMS = {
    "type": "object",
    "properties": {"amount": {"type": "number"}, "locale": {"type": "string"}},
    "required": ["amount", "locale"],
}


def draft(code: str, tests: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": "money",
        "description": "Format an amount of money in a locale.",
        "parameters": PARAMS,
        "code": code,
        "tests": tests,
    }


def test_a_locale_without_data_is_a_located_warning(tmp_path: Path) -> None:
    literal = (
        "export function handler({ amount }) {\n"
        "  return amount.toLocaleString('sw-KE', { minimumFractionDigits: 2 });\n"
        "}\n"
    )
    served_first = (
        "export function handler({ amount }) {\n"
        "  return amount.toLocaleString(['ar-EG', 'de']);\n}\n"
    )
    from_tests = (
        "export function handler({ amount, locale }) {\n"
        "  return amount.toLocaleString(locale);\n}\n"
    )
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with Foundry.open(url) as fd:
        made = fd.create_tool(
            draft(literal, [{"input": {"amount": 1, "locale": "x"}, "expected": "1.00"}])
        )
        assert made.status == "active"  # a warning, not a refusal
        (warning,) = [f for f in made.findings if f.rule == "intl_locale_without_data"]
        assert (warning.line, warning.column) == (2, 32)  # the literal
        assert "'sw-KE'" in warning.message
        assert "de-AT" in warning.message
        # a list whose later locale is served formats with that one: nothing to say
        listed = fd.create_tool(
            {
                **draft(served_first, [{"input": {"amount": 1, "locale": "x"}, "expected": "1"}]),
                "name": "money_de",
            }
        )
        assert not [f for f in listed.findings if f.rule == "intl_locale_without_data"]

    async def over_mcp() -> None:
        async with stdio_session(url, tmp_path) as (session, _):
            tests = [
                {"input": {"amount": 1234.5, "locale": "de-DE"}, "expected": "1.234,5"},
                {"input": {"amount": 1234.5, "locale": "sw-KE"}, "expected": "1,234.5"},
            ]
            called = await session.call_tool(
                "create_tool", {**draft(from_tests, tests), "name": "money_any"}
            )
            result: dict[str, Any] = called.structured_content
            assert result["status"] == "active", result
            (warning,) = [f for f in result["findings"] if f["rule"] == "intl_locale_without_data"]
            assert warning["path"] == "$.tests[1].input.locale"
            assert warning["severity"] == "warning"

    anyio.run(over_mcp)
