"""The part of create_tool's description that says what a tool's code can use.

Projected from the sandbox's own files (:mod:`toolfoundry.sandbox.js.surface`: the library
manifest, the prelude, the polyfill bundle) and the capability names (``spec/capabilities``),
never written by hand: a library bumped by jsbuild or a global added to the prelude changes the
description, and ``toolfoundry catalog check`` (docs/SKILL.md, docs/catalog.json) fails until
the committed catalogue is rebuilt. Models read it every turn, so it stays short: packages and
their import forms, not the per-function files.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolfoundry.declare.docstrings import parse_docstring
from toolfoundry.sandbox.js import surface
from toolfoundry.sandbox.js.modules import MANIFEST, POLYFILLS
from toolfoundry.spec.capabilities import KNOWN_CAPABILITIES, StorageScope

# What each capability takes, for the one line that names them (names from KNOWN_CAPABILITIES).
_CAPABILITY_VALUES = {
    "network": '["api.example.com", "*.example.com"]',
    "credentials": '["api.example.com"] (a configured header is added)',
    "storage": "true | " + " | ".join(f'"{s}"' for s in StorageScope if s is not StorageScope.NONE),
    "system": "true (Python tier)",
}


def create_tool_description(fn: Callable[..., Any]) -> str:
    """``fn``'s docstring description followed by :func:`sandbox_section`."""
    base = parse_docstring(inspect.getdoc(fn)).description or ""
    return f"{base}\n\n{sandbox_section()}"


@functools.cache
def sandbox_section(
    manifest: Path = MANIFEST,
    prelude: Path = surface.PRELUDE_DIR,
    polyfills: Path = POLYFILLS,
) -> str:
    """What the sandbox offers a JavaScript tool, in a few lines (cached per process)."""
    libraries = []
    for package in surface.packages(manifest):
        forms = f" (+ {', '.join(package.forms)})" if package.forms else ""
        libraries.append(f"{package.name} {package.version}{forms}")
    names = []
    for name, members in surface.prelude_globals(prelude).items():
        names.append(f"{name} ({', '.join(members)})" if members else name)
    seen = set(surface.prelude_globals(prelude))
    names.extend(n for n in surface.polyfill_globals(polyfills) if n not in seen)
    capabilities = "; ".join(f"{c}: {_CAPABILITY_VALUES.get(c, '...')}" for c in KNOWN_CAPABILITIES)
    lines = [
        "JavaScript code is an ES module exporting handler(args) (sync or async) that returns "
        "JSON. It may import only these bundled libraries, by npm name, default or named: "
        + (", ".join(libraries) or "none (the sandbox is not built)")
        + ".",
        "Globals besides the language: "
        + ", ".join(names)
        + ". No Node built-ins (fs, node:crypto, Buffer, process): use the globals.",
        f"capabilities (each optional) {capabilities}; fetch reaches only the network hosts.",
    ]
    return "\n".join(lines)
