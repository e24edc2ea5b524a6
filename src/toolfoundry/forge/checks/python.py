"""Static check of Python drafts with the ``ast`` module.

Refuses early, with a located finding a model can act on, what the jail would contain
anyway: imports outside the allowlist, dynamic code (eval, exec, compile, __import__, and the
string annotations ``typing.get_type_hints`` would evaluate), introspection walks toward the
interpreter's internals (``__subclasses__``, ``__globals__``, frames), process and OS calls,
``sys.modules`` tampering, ``open`` for writing outside the tool's tmpfs, and a module
without ``handler``. The jail, not this check, is the boundary.

Attribute names are one class, checked by one function (:func:`attribute_problem`) wherever
a name reaches ``getattr`` semantics: ``x.name``, ``getattr``/``setattr``/``delattr``,
``operator.attrgetter``/``methodcaller`` (dotted names too), ``match`` class patterns and
``str.format`` fields. Such a name must be written literally (a computed name, or one of
those functions passed around as a value, is refused), must not be a dunder outside a short
list of protocol names, an introspection attribute, or an attribute by which an allowed
module holds a refused one (``shlex.os``, ``random._os``: ``allowlist.module_escapes``).
Network access exists only through the ``fetch`` global, answered by the host under the
tool's fetch policy.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterable

from toolfoundry.forge.findings import Finding, Severity
from toolfoundry.sandbox.process.allowlist import ALLOWED_MODULES, module_allowed, module_escapes
from toolfoundry.spec import Capabilities

FORBIDDEN_BUILTINS = {
    "eval": "no_eval",
    "exec": "no_eval",
    "compile": "no_eval",
    "__import__": "no_dynamic_import",
    "breakpoint": "no_eval",
    "globals": "introspection",
    "locals": "introspection",
    "vars": "introspection",
    "help": "introspection",
    "__builtins__": "introspection",
}
# typing's evaluators of string annotations (an eval of text the check never parsed): refused
# as a name and as an attribute
EVALUATORS = frozenset({"get_type_hints", "ForwardRef", "_eval_type", "evaluate_forward_ref"})
# Functions that read attributes by a name given at run time: only called directly, with
# literal names (see _Visitor._dynamic_attributes).
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "delattr"})
NAME_GETTERS = frozenset({"attrgetter", "methodcaller"})  # operator's; attrgetter takes "a.b"
# Dunders a tool may name: what they give is a string, or a method of its own objects.
SAFE_DUNDERS = frozenset(
    {
        "__name__",
        "__qualname__",
        "__doc__",
        "__module__",
        "__init__",
        "__new__",
        "__post_init__",
        "__str__",
        "__repr__",
        "__format__",
        "__len__",
        "__iter__",
        "__next__",
        "__contains__",
        "__getitem__",
        "__setitem__",
        "__delitem__",
        "__enter__",
        "__exit__",
        "__aenter__",
        "__aexit__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__bool__",
    }
)
INTROSPECTION_ATTRS = frozenset(
    {
        "__subclasses__",
        "__globals__",
        "__builtins__",
        "__code__",
        "__closure__",
        "__bases__",
        "__base__",
        "__mro__",
        "__class__",
        "__dict__",
        "__getattribute__",
        "__reduce__",
        "__reduce_ex__",
        "__loader__",
        "__spec__",
        "__self__",
        "__func__",
        "__import__",
        "gi_frame",
        "gi_code",
        "cr_frame",
        "ag_frame",
        "tb_frame",
        "f_globals",
        "f_locals",
        "f_back",
        "f_builtins",
        "co_code",
        "mro",
        "get_field",  # string.Formatter: the object a "{0.attr}" field names
        "get_value",
        "_evaluate",  # ForwardRef's
    }
)
OS_CALLS = frozenset(
    {"system", "popen", "fork", "forkpty", "kill", "killpg", "spawnv", "spawnl", "startfile"}
)
IMPORT_HINTS = {
    "socket": "there is no network in the Python tier",
    "urllib": "only urllib.parse is available; there is no network in the Python tier",
    "http": "there is no network in the Python tier",
    "subprocess": "tools cannot start programs",
    "os": "tools get no OS access; use the arguments and return a value",
    "sys": "tools get no interpreter access",
    "ctypes": "native code is not available",
    "importlib": "imports must be static",
}
WRITE_MODES = frozenset("wax+")
TMP_PREFIXES = ("/tmp/", "/sandbox/")


def attribute_problem(name: str) -> tuple[str, str] | None:
    """Why a tool may not read attribute ``name`` (``(rule, message)``), or None."""
    if name in INTROSPECTION_ATTRS or (
        name.startswith("__") and name.endswith("__") and name not in SAFE_DUNDERS
    ):
        return "introspection", f"attribute {name} is not available in tools"
    if name in module_escapes():
        return (
            "introspection",
            f"attribute {name} is not available in tools: it leads to a module tools cannot "
            "import (rename the attribute if it is your own)",
        )
    if name in EVALUATORS:
        return "no_eval", f"{name} evaluates text as code and is not available in tools"
    return None


def check_python(
    code: str,
    *,
    allowed_packages: Iterable[str] = (),
    capabilities: Capabilities | None = None,
) -> list[Finding]:
    """Check a Python tool module; findings come errors first, each by position; errors block.

    Args:
        code: the module source, which must define ``handler(args)`` (sync or async).
        allowed_packages: installed top-level packages the policy lets tools import.
        capabilities: the draft's capabilities (fetch needs network hosts).
    """
    try:
        tree = ast.parse(code, filename="<tool>")
        visitor = _Visitor(code, ALLOWED_MODULES | frozenset(allowed_packages))
        visitor.visit(tree)
    except RecursionError:
        return [
            Finding(
                "too_deep",
                Severity.ERROR,
                "the code nests too deeply to check; split long expressions",
                line=1,
                column=1,
            )
        ]
    except SyntaxError as exc:
        message, line, column = exc.msg, exc.lineno or 1, exc.offset or 1
        return [
            Finding(
                "syntax_error",
                Severity.ERROR,
                f"the code does not parse: {message}",
                line=line,
                column=column,
            )
        ]
    except ValueError as exc:  # null bytes, on some 3.11 releases
        return [
            Finding(
                "syntax_error", Severity.ERROR, f"the code does not parse: {exc}", line=1, column=1
            )
        ]
    findings = visitor.findings
    if not _defines_handler(tree):
        findings.append(
            Finding(
                "no_handler",
                Severity.ERROR,
                "the module must define a top-level function handler(args)",
                line=1,
                column=1,
            )
        )
    if visitor.fetch_used and not (capabilities and capabilities.network):
        findings.append(
            Finding(
                "fetch_without_network",
                Severity.WARNING,
                "the code calls fetch but the draft declares no capabilities.network hosts; "
                "every request will be refused",
                line=visitor.fetch_used,
                column=1,
            )
        )
    return sorted(findings, key=lambda f: (not f.blocking, f.line or 0, f.column or 0))


def _defines_handler(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "handler":
            return True
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "handler" for t in node.targets
        ):
            return True
    return False


class _Visitor(ast.NodeVisitor):
    def __init__(self, code: str, allowed: frozenset[str]) -> None:
        self.lines = code.splitlines()
        self.allowed = allowed
        self.findings: list[Finding] = []
        self.fetch_used = 0  # the first line that names fetch
        self.getters: dict[str, str] = {}  # a name bound to operator.attrgetter / methodcaller
        self.evaluators: set[str] = set()  # names bound to typing's evaluators
        self.called: set[int] = set()  # getattr-like nodes seen as the function of a call

    def _add(self, node: ast.AST, rule: str, message: str) -> None:
        line = getattr(node, "lineno", 1)
        offset = getattr(node, "col_offset", 0)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        column = len(text.encode()[:offset].decode("utf-8", "replace")) + 1
        self.findings.append(Finding(rule, Severity.ERROR, message, line=line, column=column))

    def _module(self, node: ast.AST, name: str, items: Iterable[str] = ()) -> None:
        wanted = [f"{name}.{item}" for item in items if item != "*"]
        if module_allowed(name, self.allowed) and all(
            module_allowed(w, self.allowed, parent_ok=False) for w in wanted
        ):
            return
        top = name.partition(".")[0]
        hint = IMPORT_HINTS.get(top, "allowed: the listed stdlib modules and approved packages")
        shown = wanted[0] if module_allowed(name, self.allowed) and wanted else name
        self._add(node, "import_not_allowed", f"import of {shown!r} is not allowed: {hint}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._add(node, "import_not_allowed", "relative imports are not available in tools")
        else:
            self._module(node, node.module or "", [a.name for a in node.names])
        for alias in node.names:  # from operator import attrgetter as pick
            if alias.name == "*":  # binds every public name, these included
                names = {"operator": NAME_GETTERS, "typing": EVALUATORS}.get(node.module or "", ())
                self.getters.update({n: n for n in names if n in NAME_GETTERS})
                self.evaluators.update(n for n in names if n in EVALUATORS)
            if alias.name in NAME_GETTERS:
                self.getters[alias.asname or alias.name] = alias.name
            if alias.name in EVALUATORS:
                self.evaluators.add(alias.asname or alias.name)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "fetch" and not self.fetch_used:
            self.fetch_used = node.lineno
        rule = FORBIDDEN_BUILTINS.get(node.id)
        if rule is not None:
            self._add(node, rule, f"{node.id} is not available in tools")
        elif node.id in EVALUATORS or node.id in self.evaluators:
            self._add(node, "no_eval", f"{node.id} evaluates text as code; not available")
        elif self._is_name_reader(node) and id(node) not in self.called:
            self._add(node, "introspection", f"{node.id} may only be called directly")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        problem = attribute_problem(node.attr)
        if problem is not None:
            self._add(node, *problem)
        elif self._is_name_reader(node) and id(node) not in self.called:
            self._add(node, "introspection", f"{node.attr} may only be called directly")
        elif isinstance(node.value, ast.Name):
            owner = node.value.id
            if owner == "os" and (node.attr in OS_CALLS or node.attr.startswith(("exec", "spawn"))):
                self._add(node, "no_process", f"os.{node.attr} is not available in tools")
            elif owner == "io" and node.attr in {"open", "open_code", "FileIO"}:
                self._add(node, "open_write", f"io.{node.attr} is not available; use open()")
            elif owner == "sys" and node.attr == "modules":
                self._add(node, "sys_modules", "sys.modules is not available in tools")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self._is_name_reader(func):
            self.called.add(id(func))
            self._dynamic_attributes(node)
        if isinstance(func, ast.Name) and func.id == "open":
            self._check_open(node)
        if (
            isinstance(func, ast.Attribute)
            and func.attr in {"format", "format_map"}
            and isinstance(func.value, ast.Constant)
            and isinstance(func.value.value, str)
        ):
            self._format_fields(node, func.value.value)
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for name in node.kwd_attrs:  # case C(attr=x) reads x.attr
            problem = attribute_problem(name)
            if problem is not None:
                self._add(node, *problem)
        self.generic_visit(node)

    def visit_arg(self, node: ast.arg) -> None:
        self._annotation(node.annotation)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._annotation(node.annotation)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._annotation(node.returns)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._annotation(node.returns)
        self.generic_visit(node)

    def _is_name_reader(self, node: ast.AST) -> bool:
        """getattr and its kin, operator.attrgetter / methodcaller (by any import name)."""
        if isinstance(node, ast.Name):
            return node.id in ATTRIBUTE_FUNCTIONS or node.id in self.getters
        return isinstance(node, ast.Attribute) and node.attr in NAME_GETTERS

    def _dynamic_attributes(self, node: ast.Call) -> None:
        """The attribute names a getattr-like call reads: literal, each passing the rule."""
        func = node.func
        label = (
            self.getters.get(func.id, func.id) if isinstance(func, ast.Name) else ""
        ) or getattr(func, "attr", "")
        if label in ATTRIBUTE_FUNCTIONS:
            names = node.args[1:2]
        elif label == "methodcaller":
            names = node.args[:1]
        else:  # attrgetter("a", "b.c")
            names = node.args
        texts = [n.value for n in names if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        if not names or len(texts) != len(names):  # computed, starred or missing
            self._add(node, "introspection", f"{label} needs a literal attribute name")
            return
        parts = [p for t in texts for p in (t.split(".") if label == "attrgetter" else [t])]
        for part in parts:
            problem = attribute_problem(part)
            if problem is not None:
                self._add(node, *problem)
                return

    def _format_fields(self, node: ast.Call, template: str) -> None:
        """``"{0.attr}".format(x)`` reads x.attr: each attribute of each field passes the rule."""
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(template) if f]
        except ValueError:
            return  # str.format raises the same at run time
        for field in fields:
            for part in re.findall(r"\.([^.\[]*)", field):
                problem = attribute_problem(part)
                if problem is not None:
                    self._add(node, *problem)
                    return

    def _annotation(self, node: ast.expr | None) -> None:
        """String annotations are code that typing.get_type_hints (and functools.singledispatch)
        evaluate: each string inside an annotation is parsed and checked like the module."""
        if node is None:
            return
        for item in ast.walk(node):
            if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
                continue
            try:
                inner = ast.parse(item.value.strip(), mode="eval")
            except (SyntaxError, ValueError):
                self._add(item, "no_eval", "a string annotation must be a Python expression")
                continue
            nested = _Visitor("", self.allowed)
            nested.visit(inner)
            for finding in nested.findings:
                self._add(item, finding.rule, f"in a string annotation: {finding.message}")

    def _check_open(self, node: ast.Call) -> None:
        mode_node = node.args[1] if len(node.args) > 1 else None
        for keyword in node.keywords:
            if keyword.arg == "mode":
                mode_node = keyword.value
        if mode_node is None:
            return
        if not (isinstance(mode_node, ast.Constant) and isinstance(mode_node.value, str)):
            self._add(node, "open_write", "open needs a literal mode")
            return
        if not WRITE_MODES & set(mode_node.value):
            return
        path = node.args[0] if node.args else None
        if (
            isinstance(path, ast.Constant)
            and isinstance(path.value, str)
            and (path.value.startswith(TMP_PREFIXES) or not path.value.startswith("/"))
            and ".." not in path.value
        ):
            return
        self._add(
            node,
            "open_write",
            "tools may write only to literal paths under /tmp/ or the working directory",
        )
