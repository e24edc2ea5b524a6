"""A refused import of a Node built-in the sandbox offers as a global names that global."""

from __future__ import annotations

import pytest

from toolfoundry.forge import check_javascript


def _message(code: str) -> str:
    [finding] = [f for f in check_javascript(code) if f.rule == "forbidden_import"]
    return finding.message


@pytest.mark.parametrize("spec", ["crypto", "node:crypto"])
def test_a_crypto_import_points_to_the_crypto_global(spec: str) -> None:
    message = _message(f'import {{ createHmac }} from "{spec}";\nexport const handler = () => 1')
    assert f"cannot import {spec!r}" in message
    assert "`crypto` is a global here" in message
    for member in ("getRandomValues", "randomUUID", "subtle.digest", "sign", "verify"):
        assert member in message
    assert "yourself" not in message


def test_a_url_import_points_to_the_url_global() -> None:
    message = _message('import { URL } from "node:url";\nexport const handler = () => 1')
    assert "`URL` is a global here" in message


def test_an_unrelated_import_still_lists_the_libraries() -> None:
    message = _message('import fs from "fs";\nexport const handler = () => 1')
    assert "only the bundled libraries can be imported" in message
    assert "dayjs" in message
    assert "global" not in message


@pytest.mark.parametrize("spec", ["crypto", "node:crypto"])
def test_the_sandbox_refusing_the_import_at_run_time_says_the_same(spec: str) -> None:
    # run_js has no static check: the module resolver's refusal carries the hint
    from toolfoundry.sandbox import SandboxPolicy, run_js

    ran = run_js(f'import c from "{spec}";\nexport default 1', {}, SandboxPolicy())
    assert ran.error is not None
    assert f'cannot import "{spec}"' in ran.error.message
    assert "`crypto` is a global here" in ran.error.message
    assert "subtle.digest" in ran.error.message
