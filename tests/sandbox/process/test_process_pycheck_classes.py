"""The Python static check closes classes, not examples: every way a name reaches
``getattr`` semantics, every evaluator of text, every route from an allowed module to a
refused one. Each hostile module goes through the public create path and is rejected with a
located finding; ordinary code that looks alike still passes.

The jail, not this check, is the boundary (tests/sandbox/process/test_process_hostile.py): these
refusals are early, readable reasons for a model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolfoundry import Foundry
from toolfoundry.config import Config
from toolfoundry.forge import check_python
from toolfoundry.forge.checks.python import INTROSPECTION_ATTRS, SAFE_DUNDERS, attribute_problem
from toolfoundry.sandbox.process.allowlist import module_escapes

H = "def handler(a):\n    "
INTRO = "introspection"
HOSTILE: list[tuple[str, str]] = [
    # computed names through operator's getters, by every import spelling
    (
        "import operator, random\n" + H + "return operator.attrgetter('_' + 'os')(random)",
        "introspection",
    ),
    (
        "from operator import attrgetter as pick\nimport random\n"
        + H
        + "return pick('_os')(random)",
        "introspection",
    ),
    (
        "from operator import *\nimport random\n" + H + "return attrgetter(a['n'])(random)",
        "introspection",
    ),
    (
        "import operator as op\n" + H + "return op.attrgetter('real', '__class__.__mro__')(a)",
        "introspection",
    ),
    (
        "import operator\n" + H + "return operator.methodcaller('__subclasses__')(object)",
        "introspection",
    ),
    ("import operator\n" + H + "return operator.methodcaller(a['m'])(a)", INTRO),
    # getattr and its kin: literal names only, and never passed around as a value
    ("import functools\n" + H + "return functools.reduce(getattr, ['_os'], a)", INTRO),
    (H + "g = getattr\n    return g(a, 'x')", INTRO),
    (H + "return getattr(a, *a['names'])", INTRO),
    (H + "return getattr(a, f'_{a}')", INTRO),
    (H + "setattr(a, a['k'], 1)", INTRO),
    ("import random\n" + H + "return getattr(random, '_os')", INTRO),
    # allowed modules that hold refused ones
    ("import shlex\n" + H + "return shlex.os.system('id')", INTRO),
    ("import uuid\n" + H + "return uuid.os.popen('id').read()", INTRO),
    ("import random as r\n" + H + "return r._os.environ", INTRO),
    ("import dataclasses\n" + H + "return dataclasses.inspect.currentframe()", INTRO),
    ("import collections\n" + H + "return collections._sys.modules", INTRO),
    ("import fnmatch\n" + H + "m = fnmatch\n    return m.os.environ", INTRO),
    ("import typing\n" + H + "return typing.sys.modules", INTRO),
    ("import uuid\n" + H + "return uuid._get_command_stdout('id')", INTRO),
    ("import re\n" + H + "return re._compiler", INTRO),
    # namespaces and dunders outside the protocol names
    (H + "return vars(a)", INTRO),
    (H + "return a.__dict__", INTRO),
    ("import random\n" + H + "return random.__dict__['_os']", INTRO),
    (H + "return type(a).__init_subclass__", INTRO),
    (H + "return handler.__defaults__", INTRO),
    (
        H + "try:\n        1 / 0\n    except Exception as e:\n        return e.__traceback__",
        "introspection",
    ),
    (H + "return help(a)", INTRO),
    (H + "return type(a).mro()", INTRO),
    # format fields and match patterns read attributes too
    (H + "return '{0.__class__.__mro__}'.format(a)", INTRO),
    (H + "return '{x.__globals__}'.format_map({'x': handler})", INTRO),
    (
        "import string\n" + H + "return string.Formatter().get_field('0.real', [a], {})",
        "introspection",
    ),
    (H + "match a:\n        case object(__class__=c):\n            return c", INTRO),
    # text evaluated as code: typing's evaluators and the string annotations they read
    ("import typing\ndef f(x: 'int'): pass\n" + H + "return typing.get_type_hints(f)", "no_eval"),
    ("from typing import get_type_hints as h\n" + H + "return h(handler)", "no_eval"),
    ("import typing\n" + H + "return typing.ForwardRef(a['t'])", "no_eval"),
    ("def f(x: \"__import__('os').system('id')\"): pass\n" + H + "return 1", "no_dynamic_import"),
    (
        "import functools\n@functools.singledispatch\ndef g(x): pass\n@g.register\n"
        "def _(x: \"list[__import__('os').getenv('HOME')]\"): pass\n" + H + "return 1",
        "no_dynamic_import",
    ),
    ("x: 'eval(1)' = 1\n" + H + "return x", "no_eval"),
    ("def f() -> 'not python (': pass\n" + H + "return 1", "no_eval"),
]

ORDINARY = [
    "import operator\n" + H + "return sorted(a['xs'], key=operator.attrgetter('real'))",
    "from operator import attrgetter, itemgetter, methodcaller\n"
    + H
    + "return [itemgetter(a['k'])(a), attrgetter('imag', 'real')(1), methodcaller('upper')('x')]",
    H + "return '{0:.2f} {name} {0.real}'.format(1.5, name='x') + '{}'.format(a)",
    "from dataclasses import dataclass\n\n@dataclass\nclass P:\n"
    "    x: 'int'\n    y: 'list[str]'\n\n" + H + "return P(1, []).x",
    "class B(dict):\n    def __init__(self):\n        super().__init__()\n"
    "    def __repr__(self):\n        return type(self).__name__\n\n" + H + "return repr(B())",
    H + "return getattr(a, 'real', 0), hasattr(a, 'keys')",
    "import re\n" + H + "return re.compile('x').pattern",
    H + "match a:\n        case {'x': x}:\n            return x\n"
    "        case str(s):\n            return s",
    "import random\n" + H + "return random.random()",
]


@pytest.mark.parametrize(("code", "rule"), HOSTILE)
def test_check_python_refuses_each_member_of_the_class(code: str, rule: str) -> None:
    found = [(f.rule, f.line) for f in check_python(code) if f.blocking]
    assert rule in [r for r, _ in found], (code, found)
    assert all(line is not None and line >= 1 for _, line in found)


@pytest.mark.parametrize("code", ORDINARY)
def test_lookalike_ordinary_code_passes(code: str) -> None:
    assert [f.to_dict() for f in check_python(code) if f.blocking] == []


def test_module_escapes_are_computed_from_the_interpreter() -> None:
    escapes = module_escapes()
    assert {"os", "_os", "sys", "_sys", "inspect", "builtins"} <= escapes
    assert "_get_command_stdout" in escapes  # uuid's: runs a program
    assert not {"re", "json", "math", "real", "keys", "__name__", "_"} & escapes


@pytest.fixture(scope="module")
def foundry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Foundry]:
    path: Path = tmp_path_factory.mktemp("pycheck") / "registry.db"
    fd = Foundry.open(f"sqlite:///{path}", config=Config())
    yield fd
    fd.close()


def test_the_create_path_rejects_the_hostile_list_with_located_findings(foundry: Foundry) -> None:
    for index, (code, rule) in enumerate(HOSTILE):
        draft = {
            "name": f"hostile_{index}",
            "description": "Looks harmless.",
            "language": "python",
            "code": code,
            "tests": [{"input": {}, "expected": 1}],
        }
        created = foundry.create_tool(draft)
        assert created.status == "rejected", (code, created.to_dict())
        assert created.step.blockers == ("static_check_failed",), created.to_dict()
        findings = list(created.findings)
        assert any(f.rule == rule and (f.line or 0) >= 1 for f in findings), (code, findings)
        assert not created.test_results  # refused before any code ran


NAMES = st.sampled_from(
    sorted(module_escapes() | INTROSPECTION_ATTRS | SAFE_DUNDERS)
) | st.from_regex(r"\A_{0,2}[a-z][a-z_]{0,8}_{0,2}\Z")


@given(NAMES)
@settings(max_examples=120, deadline=None, derandomize=True, database=None)
def test_every_spelling_of_an_attribute_read_gets_the_same_verdict(name: str) -> None:
    spellings = [
        f"{H}return a.{name}",
        f"{H}return getattr(a, {name!r})",
        f"import operator\n{H}return operator.attrgetter({name!r})(a)",
        f"import operator\n{H}return operator.attrgetter('real.{name}')(a)",
        f"from operator import methodcaller as m\n{H}return m({name!r})(a)",
        f"{H}return '{{0.{name}}}'.format(a)",
        f"{H}match a:\n        case object({name}=x):\n            return x",
    ]
    refused = attribute_problem(name) is not None
    for code in spellings:
        try:
            compile(code, "<t>", "exec")
        except SyntaxError:
            continue  # a keyword (a.if) is no attribute read at all
        blocking = [f.rule for f in check_python(code) if f.blocking]
        assert bool(blocking) is refused, (name, code, blocking)
