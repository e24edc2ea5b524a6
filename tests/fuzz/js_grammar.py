"""Hypothesis strategies for the fuzz suites: JavaScript programs from a small grammar of
snippets and tokens (the forbidden constructs in many spellings, unicode and escape tricks),
and the shared settings that keep every target bounded and deterministic.

A generated program is an ES module whose handler returns ``{"reached": [...]}``: every
snippet that would prove a capability escaped the sandbox pushes a marker there, so the
oracle is one assertion on the value, whatever the static check thought of the code.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


def fuzz_settings(examples: int) -> settings:
    """A fixed number of examples, the same ones on every run (no example database)."""
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )


# Ways to reach the Function constructor: the static check's rules name some, not all.
FUNCTION_CHAINS = (
    "Function",
    "globalThis.Function",
    "globalThis['Func' + 'tion']",
    "(() => {}).constructor",
    "(function () {}).constructor",
    "[].map.constructor",
    "[]['con' + 'structor']['con' + 'structor']",
    "''['constructor']['constructor']",
    "[]['\\x63onstructor']['\\u0063onstructor']",
    "(async () => {}).constructor",
    "(function* () {}).constructor",
    "Object.getPrototypeOf(function () {}).constructor",
    "Reflect.getPrototypeOf(() => 0).constructor",
    "({}).constructor.constructor",
    "\\u0046unction",
    "Fun\\u{63}tion",
    "globalThis[atob('RnVuY3Rpb24=')]",
    "globalThis[String.fromCharCode(70, 117, 110, 99, 116, 105, 111, 110)]",
    "Function.prototype.constructor",
    "(0, Function)",
    "new Proxy(Function, {})",
    "Reflect.get(Math.max, 'constructor')",
)
EVAL_CHAINS = (
    "eval",
    "(0, eval)",
    "globalThis.eval",
    "globalThis['ev' + 'al']",
    "\\u0065val",
    "e\\u0076al",
    "globalThis[atob('ZXZhbA==')]",
    "Reflect.get(globalThis, 'eval')",
    "[eval][0]",
    "globalThis['\\u0065val']",
)
# JS expressions that are true only if the script reached something outside the sandbox.
ESCAPES = {
    "host_hook": "typeof __host !== 'undefined' || typeof globalThis.__host !== 'undefined'",
    "host_call": "typeof host_call !== 'undefined' || typeof tf !== 'undefined'",
    "std_os": "typeof std !== 'undefined' || typeof os !== 'undefined'",
    "node": "typeof require !== 'undefined' || typeof process !== 'undefined'",
    "script_args": "typeof scriptArgs !== 'undefined' || typeof bjson !== 'undefined'",
    "wasm": "typeof WebAssembly !== 'undefined'",
}
SPECIFIERS = (
    "dayjs",
    "decimal.js",
    "diff",
    "qjs:std",
    "qjs:os",
    "std",
    "os",
    "node:fs",
    "fs",
    "child_process",
    "./decimal.js",
    "../_build/libs/manifest.json",
    "/etc/passwd",
    "file:///etc/passwd",
    "http://127.0.0.1/x.js",
    "data:text/javascript,export default 1",
    "dayjs/../../modules.py",
    "Dayjs",
    "dayjs\u0000",
    "decimal.js ",
    "\u0064ayjs",
    "dаyjs",  # Cyrillic a
    "",
)
WORDS = (
    "eval",
    "Function",
    "constructor",
    "__proto__",
    "prototype",
    "__host",
    "globalThis",
    "import",
    "require",
    "process",
    "\u200b",
    "\u202e",
    "ｅｖａｌ",
    "\\u0065",
    "\\x65",
    "${",
    "`",
    "\\",
    "'",
    '"',
    "/*",
    "*/",
    "//",
    "\n",
)
TOKENS = (
    *WORDS,
    *(c for c in "()[]{};,.=+-*/%!?:<>&|^~"),
    "=>",
    "...",
    "new",
    "return",
    "await",
    "async",
    "function",
    "export",
    "default",
    "const",
    "let",
    "x",
    "args",
    "0",
    "1e309",
    "'a'",
    "null",
    "this",
    "with",
    "delete",
    "typeof",
)


def quoted(text: str) -> str:
    """A JS string literal (JSON's escaping is valid JS)."""
    return json.dumps(text)


@st.composite
def compile_snippet(draw: st.DrawFn) -> str:
    """Reach Function or eval in some spelling and use it to look for an escape."""
    name, probe = draw(st.sampled_from(sorted(ESCAPES.items())))
    if draw(st.booleans()):
        chain = draw(st.sampled_from(FUNCTION_CHAINS))
        call = f"({chain})({quoted('return (' + probe + ')')})()"
    else:
        chain = draw(st.sampled_from(EVAL_CHAINS))
        call = f"({chain})({quoted(probe)})"
    # Awaited: the async and generator constructors make functions whose result is an object.
    return f"try {{ if ((await {call}) === true) reach({quoted(name)}); }} catch (e) {{}}"


@st.composite
def capability_snippet(draw: st.DrawFn) -> str:
    """fetch, localStorage, crypto and import with random (often hostile) inputs."""
    text = st.text(
        st.sampled_from(
            [*"ab/.:%@#?\\", "\u3002", "\uff0e", "\u200b", " ", "\x00", "\ud800", "\udc00"]
        ),
        max_size=12,
    )
    kind = draw(st.sampled_from(["fetch", "storage", "crypto", "import", "headers"]))
    if kind == "fetch":
        tail = quoted(draw(text))
        method = quoted(draw(st.sampled_from(["GET", "POST", "CONNECT", "TRACE", "get", ""])))
        return (
            f"try {{ const r = await fetch(args.canary + {tail}, {{ method: {method} }}); "
            "reach('fetch:' + r.status); } catch (e) {}"
        )
    if kind == "storage":
        key, value = quoted(draw(text)), quoted(draw(text))
        return (
            f"try {{ localStorage.setItem({key}, {value}); "
            f"if (localStorage.getItem({key}) !== null) reach('storage'); }} catch (e) {{}}"
        )
    if kind == "crypto":
        size = draw(st.sampled_from([0, 1, 16, 65536, 65537, -1, 2**31]))
        algo = quoted(draw(st.sampled_from(["SHA-256", "SHA-1", "MD5", "sha-512", "", "x"])))
        return (
            f"try {{ crypto.getRandomValues(new Uint8Array({size})); }} catch (e) {{}} "
            f"try {{ await crypto.subtle.digest({algo}, new Uint8Array(3)); }} catch (e) {{}}"
        )
    if kind == "headers":
        name = quoted(draw(text))
        return f"try {{ new Headers([[{name}, {name}]]); }} catch (e) {{}}"
    spec = draw(st.sampled_from(SPECIFIERS))
    return (
        f"try {{ await import({quoted(spec)}); reach('import:' + {quoted(spec)}); }} catch (e) {{}}"
    )


@st.composite
def hook_snippet(draw: st.DrawFn) -> str:
    """Hunt for host hooks on the global object and its prototypes."""
    name = draw(st.sampled_from(["__host", "host", "tf", "host_call", "__tf", "std", "os"]))
    return (
        f"try {{ for (const o of [globalThis, Object.getPrototypeOf(globalThis)]) "
        f"if (o && Object.getOwnPropertyNames(o).includes({quoted(name)})) "
        f"reach('global:' + {quoted(name)}); }} catch (e) {{}}"
    )


def soup() -> st.SearchStrategy[str]:
    """Token soup: mostly syntax errors, sometimes odd valid code."""
    return st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join)


@st.composite
def hostile_module(draw: st.DrawFn) -> str:
    """An ES module that tries many ways out and reports any that worked in ``reached``."""
    snippets = draw(
        st.lists(
            st.one_of(compile_snippet(), capability_snippet(), hook_snippet()),
            min_size=1,
            max_size=6,
        )
    )
    body = "\n  ".join(snippets)
    if draw(st.integers(0, 4)) == 0:
        # A token-soup segment, inside a string given to eval or at top level.
        noise = draw(soup())
        if draw(st.booleans()):
            body += f"\n  try {{ eval({quoted(noise)}); }} catch (e) {{}}"
        else:
            body += f"\n  {noise}"
    return (
        "const reached = [];\n"
        "const reach = (what) => reached.push(what);\n"
        "export async function handler(args) {\n"
        f"  {body}\n"
        "  return { reached };\n"
        "}\n"
    )


def escapes_in(value: object, bundled: set[str]) -> list[str]:
    """The markers in a program's result that prove an escape. Importing a bundled library is
    not one (a NUL ends the specifier in the guest's C loader, so ``dayjs\\0x`` loads dayjs)."""
    if not isinstance(value, dict) or not isinstance(value.get("reached"), list):
        return []
    out = []
    for marker in value["reached"]:
        text = str(marker)
        if not (text.startswith("import:") and text[7:].split("\0")[0] in bundled):
            out.append(text)
    return out
