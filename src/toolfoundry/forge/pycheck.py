"""Static check of Python drafts with the ``ast`` module.

Refuses early, with a located finding a model can act on, what the jail would contain
anyway: imports outside the allowlist, dynamic code (eval, exec, compile, __import__),
introspection walks toward the interpreter's internals (``__subclasses__``, ``__globals__``,
frames), process and OS calls, ``sys.modules`` tampering, ``open`` for writing outside the
tool's tmpfs, and a module without ``handler``. The jail, not this check, is the boundary.
Network access exists only through the ``fetch`` global, answered by the host under the
tool's fetch policy.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from toolfoundry.forge.findings import Finding, Severity
from toolfoundry.sandbox.process.allowlist import ALLOWED_MODULES, module_allowed
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
    "__builtins__": "introspection",
}
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

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "fetch" and not self.fetch_used:
            self.fetch_used = node.lineno
        rule = FORBIDDEN_BUILTINS.get(node.id)
        if rule is not None:
            self._add(node, rule, f"{node.id} is not available in tools")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in INTROSPECTION_ATTRS:
            self._add(node, "introspection", f"attribute {node.attr} is not available in tools")
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
        if isinstance(func, ast.Name) and func.id in {"getattr", "setattr", "delattr"}:
            name = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self._add(node, "introspection", f"{func.id} needs a literal attribute name")
            elif name.value.startswith("__") or name.value in INTROSPECTION_ATTRS:
                self._add(node, "introspection", f"attribute {name.value} is not available")
        if isinstance(func, ast.Name) and func.id == "open":
            self._check_open(node)
        self.generic_visit(node)

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
