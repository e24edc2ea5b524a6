"""The bundles checked with Node first: each import form does real work; polyfills in a bare realm.

Node has its own URL, TextEncoder and friends, so the polyfill cases run in a fresh `vm` realm,
which, like a bare QuickJS, has only the JavaScript language.
"""

from __future__ import annotations

from typing import Any


def test_library_import_form_does_real_work(
    lib_case: tuple[str, str, Any], node_lib_results: dict[str, Any]
) -> None:
    name, _, expected = lib_case
    result = node_lib_results[name]
    assert "error" not in result, result.get("error")
    assert result["value"] == expected


def test_polyfill_in_bare_realm(
    polyfill_case: tuple[str, str, Any], node_polyfill_results: dict[str, Any]
) -> None:
    name, _, expected = polyfill_case
    result = node_polyfill_results[name]
    assert "error" not in result, result.get("error")
    assert result["value"] == expected
