"""Fuzz the Python tier's static check with Python from a token grammar.

It never raises, every finding is located (1-based line and column) and findings come in
position order; and when a generated module parses and calls a forbidden builtin directly, the
check blocks it (the jail is the boundary, but this fence must not have holes in plain sight).
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from toolfoundry.forge import check_python
from toolfoundry.spec import Capabilities

from .js_grammar import fuzz_settings

TOKENS = (
    *"()[]{}:;,.=+-*/%@<>!~^&|\\'\"#",
    "def",
    "async",
    "await",
    "lambda",
    "return",
    "yield",
    "import",
    "from",
    "as",
    "class",
    "with",
    "try",
    "except",
    "finally",
    "global",
    "nonlocal",
    "del",
    "if",
    "else",
    "for",
    "in",
    "while",
    "match",
    "case",
    "handler",
    "args",
    "eval",
    "exec",
    "compile",
    "__import__",
    "__builtins__",
    "__class__",
    "__subclasses__",
    "__globals__",
    "os",
    "sys",
    "open",
    "fetch",
    "f'",
    "b'",
    "r'",
    '"""',
    "\n",
    "\n    ",
    "\t",
    "\x00",
    "\u200b",
    "ｅｖａｌ",
    "\\N{LATIN SMALL LETTER E}",
    "0",
    "1j",
    "0x_",
    "...",
)
FORBIDDEN_CALLS = (
    "eval('1')",
    "exec('x = 1')",
    "compile('1', 'f', 'eval')",
    "__import__('os')",
    "breakpoint()",
    "globals()",
    "vars()",
)
STATEMENTS = (
    "x = 1",
    "import json",
    "import os",
    "from os import path",
    "import importlib",
    "open('/etc/passwd', 'w')",
    "open('/tmp/ok', 'w')",
    "().__class__.__bases__[0].__subclasses__()",
    "(lambda: 0).__globals__",
    "getattr(__builtins__, 'ev' + 'al')",
    "fetch('https://example.com')",
    "await fetch('https://example.com')",
    "yield 1",
    "global x",
    "match args:\n        case {'a': 1}: pass",
    "x = [y for y in range(3)]",
    "del args['x']",
)


@st.composite
def modules(draw: st.DrawFn) -> tuple[str, bool]:
    """A module and whether it calls a forbidden builtin directly inside ``handler``."""
    body = draw(st.lists(st.sampled_from(STATEMENTS), max_size=4))
    forbidden = draw(st.booleans())
    if forbidden:
        body.insert(draw(st.integers(0, len(body))), draw(st.sampled_from(FORBIDDEN_CALLS)))
    header = draw(st.sampled_from(["def handler(args):", "async def handler(args):"]))
    code = header + "\n" + "".join(f"    {line}\n" for line in body or ["pass"])
    if draw(st.integers(0, 3)) == 0:
        noise = " ".join(draw(st.lists(st.sampled_from(TOKENS), max_size=30)))
        at = draw(st.integers(0, len(code)))
        code = code[:at] + noise + code[at:]
    return code, forbidden


# Generated code has odd escapes; compiling it warns, which is the parser's business here.
@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")
@fuzz_settings(2000)
@given(module=modules(), network=st.booleans())
def test_check_python_never_raises_and_locates_every_finding(
    module: tuple[str, bool], network: bool
) -> None:
    code, forbidden = module
    capabilities = Capabilities(network=("api.example.com",)) if network else None
    findings = check_python(code, capabilities=capabilities)
    for finding in findings:
        assert finding.rule
        assert finding.message
        assert finding.line is not None
        assert finding.line >= 1
        assert finding.column is not None
        assert finding.column >= 1
    where = [(not f.blocking, f.line, f.column) for f in findings]
    assert where == sorted(where)  # errors first, each group by position
    errors = [f for f in findings if f.blocking]
    try:
        ast.parse(code)
        parses = True
    except (SyntaxError, ValueError):
        parses = False
    event(f"parses: {parses}, forbidden: {forbidden}")
    if parses and forbidden:
        assert errors, code


@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")
@fuzz_settings(1000)
@given(code=st.lists(st.sampled_from(TOKENS), max_size=60).map(" ".join) | st.text(max_size=80))
def test_check_python_never_raises_on_token_soup(code: str) -> None:
    for finding in check_python(code):
        assert finding.rule
        assert finding.line is not None
