"""What a tool's code can use in the sandbox, read from the sandbox's own files.

The bundled libraries come from ``_build/libs/manifest.json`` (versions and import forms, as
jsbuild pinned them), the globals from the prelude's ``define("name", ...)`` calls and from the
polyfill bundle's global definitions. This is what create_tool's description says
(``foundry/create_tool_text.py``), so the description follows the sandbox when either changes;
``tests/sandbox/js/test_sandbox_surface.py`` checks the result against a live sandbox.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from toolfoundry.sandbox.js.modules import MANIFEST, POLYFILLS, package_of

PRELUDE_DIR = Path(__file__).resolve().parent / "prelude"

# `define("fetch", fetch)` in the prelude; `define("crypto", freeze({ a, b }))` names members.
_DEFINE = re.compile(r'\bdefine\(\s*"([A-Za-z_$][\w$]*)"')
_MEMBERS = re.compile(r'\bdefine\(\s*"(\w+)",\s*freeze\(\{([\w\s,]*)\}\)')
# `const INTL_MEMBERS = ["Collator", ...]`: the members of the global `Intl`.
_LISTED = re.compile(r"const ([A-Z]+)_MEMBERS = \[([^\]]*)\]")
# The polyfill bundle (core-js and ours, minified): `{global:!0,...},{URL:` and
# `[["TextEncoder",x],["TextDecoder",y]]` followed by a defineProperty on globalThis.
_CORE_JS = re.compile(r"global:!0[^}]*\},\{([A-Za-z_$][\w$]*):")
_PAIRS = re.compile(r'for\(let\[\w+,\w+\]of\[((?:\["\w+",\w+\],?)+)\]\)')
_PAIR = re.compile(r'\["(\w+)",')
# Methods of an object literal in the prelude: `const subtle = freeze({ async digest(`.
_OBJECT = r"const {name} = freeze\(\{{(.*?)\n  \}}\);"
_METHOD = re.compile(r"^\s{4}(?:async\s+)?([a-zA-Z]\w*)\(", re.M)


@dataclass(frozen=True)
class Package:
    """One npm package bundled in the sandbox.

    Attributes:
        name: the npm name (``dayjs``).
        version: its pinned version.
        forms: the other specifiers it can be imported by, summarised (``dayjs/plugin/*``);
            file-name variants (``.js``, ``/index.js``) are left out.
    """

    name: str
    version: str
    forms: tuple[str, ...]


def packages(manifest: Path = MANIFEST) -> list[Package]:
    """The bundled packages in the manifest's order (empty when it is missing or unreadable)."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        libs = {str(n): str(e.get("version", "")) for n, e in dict(data["libs"]).items()}
        aliases = [str(a) for a in dict(data.get("aliases", {}))]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []
    found: dict[str, tuple[str, set[str]]] = {}
    for spec, version in libs.items():
        package = package_of(spec)
        found.setdefault(package, (version, set()))
        if spec != package:
            found[package][1].add(spec)
    for alias in aliases:
        package = package_of(alias)
        if package in found and not _is_file_name(alias):
            found[package][1].add(alias)
    return [Package(name, v, _summary(name, subs)) for name, (v, subs) in found.items()]


def _is_file_name(specifier: str) -> bool:
    last = specifier.rsplit("/", 1)[-1]
    return last.endswith((".js", ".mjs", ".cjs")) and "/" in specifier


def _summary(package: str, subpaths: set[str]) -> tuple[str, ...]:
    """Subpaths with three or more siblings under one folder collapse to ``folder/*``."""
    by_folder: dict[str, list[str]] = {}
    for sub in subpaths:
        by_folder.setdefault(sub.rsplit("/", 1)[0], []).append(sub)
    out: set[str] = set()
    for folder, subs in by_folder.items():
        if len(subs) >= 3:
            out.add(f"{folder}/*")
        else:
            out.update(subs)
    # a folder that is itself collapsed covers its own subfolders' entries (`date-fns/locale`)
    stars = {s[:-2] for s in out if s.endswith("/*")}
    return tuple(sorted(s for s in out if s.endswith("/*") or s.rsplit("/", 1)[0] not in stars))


@functools.cache
def prelude_globals(prelude: Path = PRELUDE_DIR) -> dict[str, tuple[str, ...]]:
    """The globals the prelude defines, in its order, each with the members it lists (cached:
    the prelude is package data; do not change the dict).

    ``crypto`` lists ``getRandomValues, randomUUID, subtle.digest/...``: the object literal's
    shorthand members, and the methods of a member defined as ``const name = freeze({...})``;
    ``Intl`` lists its ``INTL_MEMBERS``.
    """
    found: dict[str, tuple[str, ...]] = {}
    for path in sorted(prelude.glob("*.js")):
        text = path.read_text(encoding="utf-8")
        members = {m.group(1): m.group(2) for m in _MEMBERS.finditer(text)}
        for match in _DEFINE.finditer(text):
            name = match.group(1)
            listed = [m.strip() for m in members.get(name, "").split(",") if m.strip()]
            found[name] = tuple(_expand(text, m) for m in listed)
        for array in _LISTED.finditer(text):
            owner = next((n for n in found if n.upper() == array.group(1)), None)
            if owner is not None:
                found[owner] = tuple(re.findall(r'"(\w+)"', array.group(2)))
    return found


def _expand(text: str, member: str) -> str:
    body = re.search(_OBJECT.format(name=re.escape(member)), text, re.S)
    if body is None:
        return member
    methods = _METHOD.findall(body.group(1))
    return f"{member}.{'/'.join(methods)}" if methods else member


@functools.cache
def polyfill_globals(polyfills: Path = POLYFILLS) -> tuple[str, ...]:
    """The globals the polyfill bundle defines (when the engine lacks them), in its order."""
    try:
        text = polyfills.read_text(encoding="utf-8")
    except OSError:
        return ()
    names: list[str] = []
    for pairs in _PAIRS.finditer(text):
        names.extend(_PAIR.findall(pairs.group(1)))
    names.extend(_CORE_JS.findall(text))
    return tuple(dict.fromkeys(names))


def global_instead(specifier: str, prelude: Path = PRELUDE_DIR) -> str | None:
    """The global that does what an unbundled import means, when one is named alike.

    ``crypto`` and ``node:crypto`` name the ``crypto`` global, ``url`` the ``URL`` global:
    a Node built-in the sandbox offers as a web API. None for anything else.
    """
    wanted = specifier.removeprefix("node:").lower()
    described = prelude_globals(prelude)
    for name in [*described, *polyfill_globals()]:
        if name.lower() == wanted:
            members = described.get(name, ())
            listed = f" ({', '.join(members)})" if members else ""
            return f"`{name}` is a global here{listed}: use it without importing"
    return None
