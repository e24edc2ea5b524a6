"""The polyfills against a reference: Node's own WHATWG URL, Encoding and base64 implementations.

Each probe is a JS function over a list of inputs. Node runs it natively (the reference), then
in a bare `vm` realm after polyfills.js, and the sandbox runs it through `run_js`: all three must
agree input by input.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolfoundry.sandbox import run_js

URLS = [
    "https://example.com",
    "HTTP://EXAMPLE.COM:80/a/../b/./c",
    "https://ex%61mple.com/",
    "https://xn--nxasmq6b.com",
    "https://ÉXAMPLE.com/",
    "https://faß.de/",
    "https://ＥＸＡＭＰＬＥ.com/",
    "https://a.b/%7e?%7e#%7e",
    "https://a.b/ä?ä#ä",
    "https://a.b/😀",
    "https://[::ffff:127.0.0.1]/",
    "https://[2001:db8::1]:8080/x",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://1.2.3.4.5/",
    "http://999.1.1.1/",
    "https://user:p%40ss@host/",
    "https://us er@host/",
    "https://host:99999/",
    "https://host:-1/",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "data:text/plain,hi",
    "blob:https://a.b/uuid",
    "mailto:a@b.c",
    "https://a.b\\c\\d",
    "  https://a.b/  ",
    "https://a.b/\t\nx",
    "//a.b/c",
    "",
    "https://a.b?q=a b&c=d#f g",
    "https://a.b/p?x=%zz",
    "https://%00.com",
    "https://a..b/",
    "https://a.b./",
    "ws://a.b/s",
    "https://a.b:443/",
    "http://a.b:443/",
    "https://a_b.com/",
    "https://ex ample.com",
    "https://-a.com/",
    "HTTPS://a.b/%2e%2E/x",
    "https://a.b/..%2f",
    "non-special://host/p?q",
    "https://a.b?",
    "http://[1:2:3:4:5:6:7:8:9]/",
]
QUERIES = [
    "",
    "?",
    "a=1&b=2",
    "a=1&a=2&a",
    "%zz=%41&+=+",
    "a=b=c",
    "&&x=1&&",
    "é=ü&😀=1",
    "q=a%2Bb",
]

PROBES: dict[str, str] = {
    "URL": "(xs) => xs.map((s) => { try { const u = new URL(s);"
    " return [u.href, u.origin, u.host, u.pathname, u.search, u.hash]; }"
    " catch (e) { return e.name; } })",
    "URL relative": "(xs) => xs.map((s) => { try { return new URL(s, 'https://h.test/a/b?c#d').href;"
    " } catch (e) { return e.name; } })",
    "URLSearchParams": "(xs) => xs.map((s) => { const p = new URLSearchParams(s); const before ="
    " [...p]; p.sort(); p.append('k y', 'v&w'); return [before, p.toString()]; })",
    "TextDecoder": "(xs) => xs.map((b) => new TextDecoder().decode(new Uint8Array(b)))",
    "TextEncoder": "(xs) => xs.map((s) => Array.from(new TextEncoder().encode(s)))",
    "atob": "(xs) => xs.map((s) => { try { return atob(s); } catch (e) { return e.name; } })",
    "btoa": "(xs) => xs.map((s) => { try { return btoa(s); } catch (e) { return e.name; } })",
}


def _inputs() -> dict[str, list[Any]]:
    rng = random.Random(20240605)
    # bytes biased towards UTF-8 lead, continuation and boundary values
    alphabet = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0]
    alphabet += [0xE1, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
    byte_lists = [[rng.choice(alphabet) for _ in range(rng.randint(0, 10))] for _ in range(300)]
    units = ["a", "é", "€", "😀", "\ud800", "\udc00", "\udbff", "\u0000", "\uffff"]
    strings = ["".join(rng.choice(units) for _ in range(rng.randint(0, 6))) for _ in range(200)]
    b64 = "AQab+/=  \t\n-_*"
    atobs = ["".join(rng.choice(b64) for _ in range(rng.randint(0, 9))) for _ in range(200)]
    latin = ["a", "\u00ff", "\u0000", " ", "\u0100", "☃"]
    btoas = ["".join(rng.choice(latin) for _ in range(rng.randint(0, 5))) for _ in range(100)]
    return {
        "URL": URLS,
        "URL relative": [*URLS, "", "..", "?x", "#y", "/abs", "c/d", "//o.test/p", "\\\\o.test"],
        "URLSearchParams": QUERIES,
        "TextDecoder": byte_lists,
        "TextEncoder": strings,
        "atob": atobs,
        "btoa": btoas,
    }


INPUTS = _inputs()


@pytest.fixture(scope="module")
def reference(node: str, built: Path) -> dict[str, dict[str, Any]]:
    """{probe: {"native": [...], "polyfill": [...]}} computed by Node in one process."""
    script = f"""
import vm from "node:vm";
import {{ readFileSync }} from "node:fs";
const polyfills = readFileSync({json.dumps(str(built / "polyfills.js"))}, "utf8");
const probes = {json.dumps(PROBES)};
const inputs = JSON.parse(readFileSync(0, "utf8"));
const out = {{}};
for (const [name, source] of Object.entries(probes)) {{
  const realm = vm.createContext({{}});
  vm.runInContext(polyfills, realm);
  const polyfilled = vm.runInContext(`(${{source}})`, realm);
  out[name] = {{
    native: (0, eval)(`(${{source}})`)(inputs[name]),
    polyfill: JSON.parse(JSON.stringify(polyfilled(JSON.parse(JSON.stringify(inputs[name]))))),
  }};
}}
process.stdout.write(JSON.stringify(out));
"""
    proc = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(INPUTS),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, dict[str, Any]] = json.loads(proc.stdout)
    return result


def _mismatches(name: str, expected: list[Any], actual: list[Any]) -> list[str]:
    assert len(expected) == len(actual)
    return [
        f"{INPUTS[name][i]!r}: reference {want!r}, got {got!r}"
        for i, (want, got) in enumerate(zip(expected, actual, strict=True))
        if want != got
    ]


@pytest.mark.parametrize("probe", list(PROBES))
def test_polyfill_matches_node_in_bare_realm(probe: str, reference: dict[str, Any]) -> None:
    ref = reference[probe]
    assert _mismatches(probe, ref["native"], ref["polyfill"]) == []


@pytest.mark.parametrize("probe", list(PROBES))
def test_polyfill_matches_node_in_sandbox(probe: str, reference: dict[str, Any]) -> None:
    # The inputs are written into the module as JSON escapes: arguments holding a lone
    # surrogate are refused at the sandbox's door (the JSON gate), strings made inside are not.
    xs = json.dumps(INPUTS[probe])
    code = f"const xs = {xs};\nexport function handler() {{ return ({PROBES[probe]})(xs); }}"
    result = run_js(code, {})
    assert result.ok, result.error
    assert _mismatches(probe, reference[probe]["native"], result.value) == []
