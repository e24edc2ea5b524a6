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
from toolfoundry.forge.policy import CapabilityPolicy
from toolfoundry.sandbox.js import surface
from toolfoundry.sandbox.js.intl_parts import IntlLocales
from toolfoundry.sandbox.js.modules import MANIFEST, POLYFILLS
from toolfoundry.sandbox.process.allowlist import ALLOWED_MODULES
from toolfoundry.spec.capabilities import KNOWN_CAPABILITIES, Capabilities, StorageScope

# What each capability takes, for the one line that names them (names from KNOWN_CAPABILITIES).
_CAPABILITY_VALUES = {
    "network": '["api.example.com", "*.example.com"]',
    "credentials": '["api.example.com"] (a configured header is added)',
    "storage": "true | " + " | ".join(f'"{s}"' for s in StorageScope if s is not StorageScope.NONE),
    "system": "true (Python tier)",
}


# How the line naming the sandbox's globals starts: the compact MCP surface leaves that line
# out (server/mcp/surface.py; the code parameter names the ones that matter).
GLOBALS_LINE = "Globals besides the language: "


def _intl_line(manifest: Path) -> str:
    locales = IntlLocales.read(manifest).names()
    if not locales:
        return "Intl has no locale data (the sandbox is not built): every locale formats as en-US."
    return (
        "Intl has locale data for "
        + ", ".join(sorted(locales))
        + " (and their regions: de-LU uses de); any other locale formats as en-US, and "
        "Intl.*.supportedLocalesOf answers which are served."
    )


def create_tool_description(fn: Callable[..., Any], python: CapabilityPolicy | None = None) -> str:
    """``fn``'s docstring description followed by :func:`sandbox_section`, and by
    :func:`python_section` under ``python`` (the policy) when the Python tier is available."""
    base = parse_docstring(inspect.getdoc(fn)).description or ""
    tail = f"\n{python_section(python)}" if python is not None else ""
    return f"{base}\n\n{sandbox_section()}{tail}"


def python_section(policy: CapabilityPolicy) -> str:
    """What a Python-tier tool is, from the tier's own rules: its module's form (the check,
    forge/checks/python.py), the modules it may import (sandbox/process/allowlist.py and the
    policy's python_packages) and whether it waits for approval (the policy's decision)."""
    modules = sorted(ALLOWED_MODULES | set(policy.python_packages))
    waits = policy.decide(Capabilities(), "python").needs_approval
    return (
        'Python tier (language: "python"): a module defining handler(args) (sync or async) '
        "that returns JSON, run in an OS jail with no network unless granted; it may import "
        "only: "
        + ", ".join(modules)
        + ". "
        + (
            "Every version waits for a human's approval."
            if waits
            else "It activates as soon as its tests pass (policy auto_approve_python)."
        )
    )


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
        GLOBALS_LINE
        + ", ".join(names)
        + ". No Node built-ins (fs, node:crypto, Buffer, process): use the globals.",
        _intl_line(manifest),
        f"capabilities (each optional) {capabilities}; fetch reaches only the network hosts.",
    ]
    return "\n".join(lines)
