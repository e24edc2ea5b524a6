"""Which modules a Python tool may import: a stdlib allowlist plus packages the policy names.

Left out on purpose: anything that reaches the OS, the network, other processes or the
interpreter's internals (os, sys, pathlib, socket, subprocess, ctypes, importlib, types,
inspect, gc, pickle, asyncio, threading, multiprocessing, tempfile, shutil, codecs).
The jail contains all of them anyway; the list keeps refusals early and readable.
"""

from __future__ import annotations

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
