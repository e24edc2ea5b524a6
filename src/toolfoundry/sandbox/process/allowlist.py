"""Which modules a Python tool may import: a stdlib allowlist plus packages the policy names.

Left out on purpose: anything that reaches the OS, the network, other processes or the
interpreter's internals (os, sys, pathlib, socket, subprocess, ctypes, importlib, types,
inspect, gc, pickle, asyncio, threading, multiprocessing, tempfile, shutil, codecs).
The jail contains all of them anyway; the list keeps refusals early and readable.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable

ALLOWED_MODULES: frozenset[str] = frozenset(
    {
        "abc",
        "array",
        "base64",
        "binascii",
        "bisect",
        "calendar",
        "cmath",
        "collections",
        "colorsys",
        "contextlib",
        "copy",
        "csv",
        "dataclasses",
        "datetime",
        "decimal",
        "difflib",
        "enum",
        "fnmatch",
        "fractions",
        "functools",
        "graphlib",
        "hashlib",
        "heapq",
        "hmac",
        "html",
        "io",
        "ipaddress",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "pprint",
        "random",
        "re",
        "secrets",
        "shlex",
        "statistics",
        "string",
        "struct",
        "textwrap",
        "time",
        "typing",
        "unicodedata",
        "urllib.parse",
        "uuid",
        "zlib",
        "zoneinfo",
    }
)


def module_allowed(name: str, allowed: Iterable[str], *, parent_ok: bool = True) -> bool:
    """Whether the dotted module ``name`` falls under an allowed entry.

    ``json.decoder`` falls under ``json``; ``urllib`` itself is a harmless parent of the
    allowed ``urllib.parse`` (when ``parent_ok``), but ``urllib.request`` is not allowed.
    """
    for entry in allowed:
        if name == entry or name.startswith(entry + "."):
            return True
        if parent_ok and entry.startswith(name + "."):
            return True
    return False


# Modules no allowed module's attributes may lead to, whether or not one holds them here.
ALWAYS_REFUSED = frozenset({"os", "sys", "builtins", "importlib", "inspect", "gc", "ctypes"})


@functools.cache
def module_escapes() -> frozenset[str]:
    """Attribute names by which an allowed stdlib module (or a loaded submodule of one) reaches
    what tools may not: a module it holds that tools may not import (``shlex.os``,
    ``random._os``, ``dataclasses.inspect``, ``collections._sys``), or any of its private
    names (``uuid._get_command_stdout`` runs a program; its internals are no tool's API),
    plus :data:`ALWAYS_REFUSED`.

    Computed from this interpreter's own modules (imported here once, on the first Python
    check), so a new Python version's new private imports are covered without a list to keep.
    """
    import importlib
    import sys
    import types

    for name in ALLOWED_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    names: set[str] = set(ALWAYS_REFUSED)
    for name, module in list(sys.modules.items()):
        if module is None or not module_allowed(name, ALLOWED_MODULES, parent_ok=False):
            continue
        for attribute, value in list(vars(module).items()):
            private = attribute.startswith("_") and not attribute.endswith("__")
            if private or (
                isinstance(value, types.ModuleType)
                and not module_allowed(value.__name__, ALLOWED_MODULES, parent_ok=False)
            ):
                names.add(attribute)
    return frozenset(names)
