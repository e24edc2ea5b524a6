"""The forge's static check of Python drafts: each attack refused with a rule and a location."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolfoundry.forge import check_python
from toolfoundry.spec import Capabilities


def rules(code: str, **kwargs: object) -> list[tuple[str, int | None]]:
    return [(f.rule, f.line) for f in check_python(code, **kwargs) if f.blocking]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("code", "rule", "line"),
    [
        ("import socket\ndef handler(a):\n    return 1\n", "import_not_allowed", 1),
        ("def handler(a):\n    import urllib.request\n", "import_not_allowed", 2),
        ("from urllib import request\ndef handler(a):\n    pass\n", "import_not_allowed", 1),
        ("import http.client\ndef handler(a):\n    pass\n", "import_not_allowed", 1),
        ("import subprocess\ndef handler(a):\n    pass\n", "import_not_allowed", 1),
        ("import ctypes\ndef handler(a):\n    pass\n", "import_not_allowed", 1),
        ("from os import system\ndef handler(a):\n    pass\n", "import_not_allowed", 1),
        ("import importlib\ndef handler(a):\n    pass\n", "import_not_allowed", 1),
        ("from . import x\ndef handler(a):\n    pass\n", "import_not_allowed", 1),
        ("def handler(a):\n    return eval(a['e'])\n", "no_eval", 2),
        ("def handler(a):\n    exec('x=1')\n", "no_eval", 2),
        ("def handler(a):\n    return compile('1', 'f', 'eval')\n", "no_eval", 2),
        ("def handler(a):\n    return __import__('os')\n", "no_dynamic_import", 2),
        (
            "def handler(a):\n    return ().__class__.__bases__[0].__subclasses__()\n",
            "introspection",
            2,
        ),
        ("def handler(a):\n    return handler.__globals__\n", "introspection", 2),
        ("def handler(a):\n    return handler.__code__\n", "introspection", 2),
        ("def handler(a):\n    return __builtins__\n", "introspection", 2),
        ("def handler(a):\n    return getattr(a, '__class__')\n", "introspection", 2),
        ("def handler(a):\n    return getattr(a, a['name'])\n", "introspection", 2),
        ("def handler(a):\n    return globals()\n", "introspection", 2),
        ("def handler(a):\n    os.system('id')\n", "no_process", 2),
        ("def handler(a):\n    os.execv('/bin/sh', [])\n", "no_process", 2),
        ("def handler(a):\n    os.kill(1, 9)\n", "no_process", 2),
        ("def handler(a):\n    os.fork()\n", "no_process", 2),
        ("def handler(a):\n    sys.modules['json'] = None\n", "sys_modules", 2),
        ("def handler(a):\n    open('/etc/passwd', 'w')\n", "open_write", 2),
        ("def handler(a):\n    open(a['p'], mode='a')\n", "open_write", 2),
        ("def handler(a):\n    open('/tmp/../etc/x', 'w')\n", "open_write", 2),
        ("import io\ndef handler(a):\n    io.open('/x', 'w')\n", "open_write", 3),
        ("def handle(a):\n    return 1\n", "no_handler", 1),
        ("def handler(a)\n    return 1\n", "syntax_error", 1),
    ],
)
def test_refusals(code: str, rule: str, line: int) -> None:
    assert (rule, line) in rules(code)


def test_findings_have_columns_in_characters() -> None:
    [finding] = check_python("def handler(a):\n    x = 'é'; eval('1')\n")
    assert finding.rule == "no_eval"
    assert (finding.line, finding.column) == (2, 14)  # the UTF-8 byte offset would say 15
    assert finding.to_dict()["column"] == 14


@pytest.mark.parametrize(
    "code",
    [
        "import csv, io, json, re, statistics\nfrom datetime import date, timedelta\n"
        "from collections import Counter\nfrom urllib.parse import quote\n"
        "def handler(args):\n    return quote(json.dumps(args))\n",
        "import zoneinfo, decimal, fractions, hashlib, base64, uuid, textwrap\n"
        "async def handler(args):\n    return 1\n",
        "def handler(args):\n    open('/tmp/x.txt', 'w').write('1')\n    open('out.csv', 'w')\n"
        "    return open('/usr/share/dict/words').read()\n",
        "class Box:\n    def __init__(self, v):\n        self.v = v\n\n"
        "def _work(a):\n    return Box(a).v\n\nhandler = _work\n",
    ],
)
def test_ordinary_tools_pass(code: str) -> None:
    assert rules(code) == []


def test_allowed_packages_come_from_the_policy() -> None:
    code = "import yaml\ndef handler(a):\n    return yaml.safe_dump(a)\n"
    assert rules(code) == [("import_not_allowed", 1)]
    assert rules(code, allowed_packages=["yaml"]) == []


def test_fetch_without_network_hosts_is_a_warning() -> None:
    code = "def handler(a):\n    return fetch(a['url']).json()\n"
    [finding] = check_python(code)
    assert (finding.rule, finding.severity.value, finding.line) == (
        "fetch_without_network",
        "warning",
        2,
    )
    assert check_python(code, capabilities=Capabilities(network=("api.example.com",))) == []


def test_hints_say_why() -> None:
    [finding] = check_python("import socket\ndef handler(a):\n    pass\n")
    assert "no network" in finding.message


def test_policy_packages_from_toolfoundry_toml(tmp_path: Path) -> None:
    from toolfoundry.config import ConfigError, load_config

    good = tmp_path / "toolfoundry.toml"
    good.write_text('[policy]\npython_packages = ["yaml"]\n')
    assert load_config(good).policy.python_packages == ("yaml",)
    bad = tmp_path / "bad.toml"
    bad.write_text('[policy]\npython_packages = ["../evil", 3]\n')
    with pytest.raises(ConfigError, match="python_packages"):
        load_config(bad)


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_any_text_gives_findings_never_an_exception(code: str) -> None:
    findings = check_python(code)
    assert all(f.line is None or f.line >= 1 for f in findings)
    assert any(f.blocking for f in findings) or "handler" in code


@pytest.mark.parametrize(
    "code",
    ["x = " + "1 + " * 100_000 + "1\ndef handler(a):\n    pass\n", "x = " + "[" * 250 + "]" * 250],
)
def test_pathological_nesting_is_a_finding(code: str) -> None:
    findings = check_python(code)
    assert findings
    assert findings[0].rule in {"too_deep", "syntax_error"}
