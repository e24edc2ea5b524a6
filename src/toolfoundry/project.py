"""The project's own declared tools, read from ``[catalog] sources`` in ``toolfoundry.toml``.

    [catalog]
    sources = ["shop.tools", "shop.cli:build_parser", "scripts/report.py:report"]

A source is one of:

- ``pkg.module``: the module is imported and every module-level declared tool in it is taken
  (``@tool`` functions, ``toolfoundry.workflow`` workflows, ``ArgparseCommand`` objects; any
  object with a ``ToolSpec`` ``spec`` and a ``call``), in definition order;
- ``pkg.module:attr`` (``attr`` may be dotted): that attribute, which is a declared tool, an
  ``argparse.ArgumentParser`` (one tool per subcommand, see ``from_argparse``), a list or tuple
  of those, or a callable taking no arguments that returns any of these;
- ``path/to/file.py`` or ``path/to/file.py:attr``: the same, for a file that is not a module
  of an importable package (relative to the configuration file's folder).

Module imports see the ``[catalog] pythonpath`` folders (default: the configuration file's
folder). The ``catalog write|check``, ``describe``, ``serve`` and ``agent`` commands all read
their tools here: the built-in meta-tools first, then these. A name may appear once among
them all; in ``serve`` and ``agent`` a declared tool wins over a registry tool of the same name.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from toolfoundry.catalog.drift import Artifact, default_artifacts
from toolfoundry.catalog.skill import DEFAULT_SKILL_NAME
from toolfoundry.config import CatalogSettings, Config, ConfigError, load_config
from toolfoundry.foundry.meta_tools import builtin_specs
from toolfoundry.spec import DeclaredTool, ToolSpec


@dataclass(frozen=True)
class Project:
    """A project that uses toolfoundry: where it lives, its ``[catalog]`` table, its tools.

    Attributes:
        root: the configuration file's folder (the working directory without one); relative
            ``out`` paths and file sources are read from here.
        settings: the ``[catalog]`` table.
        tools: the declared tools of every source, in source order.
    """

    root: Path
    settings: CatalogSettings
    tools: tuple[DeclaredTool, ...]

    @classmethod
    def load(
        cls, config: Config | str | Path | None = None, *, sources: Sequence[str] | None = None
    ) -> Project:
        """Read the project's tools.

        Args:
            config: a loaded configuration, or the path of ``toolfoundry.toml`` (default:
                ``./toolfoundry.toml`` when it exists).
            sources: used instead of ``[catalog] sources`` when given (``--source``).

        Raises:
            ConfigError: a source cannot be imported, names nothing, holds something that is
                not a tool, or two tools share a name.
        """
        if not isinstance(config, Config):
            config = load_config(config)
        root = config.path.parent if config.path is not None else Path.cwd()
        settings = config.catalog
        if sources is not None:
            settings = replace(settings, sources=tuple(sources))
        return cls(root.resolve(), settings, tuple(load_tools(settings, root)))

    def specs(self) -> list[ToolSpec]:
        """The built-in meta-tools' specs, then the project's own."""
        return [*builtin_specs(), *(tool.spec for tool in self.tools)]

    def artifacts(self) -> tuple[Artifact, ...]:
        """The committed catalogue files, with paths under :attr:`root`.

        A skill file's name is its entry's ``skill_name``, else ``[catalog] skill_name``, else
        its folder's name.
        """
        name = self.settings.skill_name
        chosen = self.settings.out
        if chosen is None:
            chosen = default_artifacts(name or DEFAULT_SKILL_NAME)
        return tuple(
            Artifact(
                self.root / a.path,
                a.format,
                a.skill_name or (name if a.format == "skill" else None),
            )
            for a in chosen
        )


def installed_specs(extra: Iterable[ToolSpec] = ()) -> list[ToolSpec]:
    """The built-in meta-tools plus ``extra`` (the project's tools, the registry's active
    ones); an extra spec with a built-in's name replaces it."""
    by_name = {spec.name: spec for spec in builtin_specs()}
    for spec in extra:
        by_name[spec.name] = spec
    return list(by_name.values())


def load_tools(settings: CatalogSettings, root: Path) -> list[DeclaredTool]:
    """The declared tools of ``settings.sources`` (see the module's docstring).

    Raises:
        ConfigError: as :meth:`Project.load`.
    """
    if not settings.sources:
        return []
    for folder in reversed(settings.pythonpath):
        entry = str((root / folder).resolve())
        if entry not in sys.path:
            sys.path.insert(0, entry)
    reserved = {spec.name: "the built-in meta-tools" for spec in builtin_specs()}
    found: dict[str, tuple[DeclaredTool, str]] = {}
    for source in settings.sources:
        for tool in _source_tools(source, root):
            name = tool.spec.name
            if name in found and found[name][0] is tool:
                continue  # the same object reached through two sources
            if name in reserved or name in found:
                where = reserved.get(name) or f"catalog source {found[name][1]!r}"
                raise ConfigError(
                    f"catalog source {source!r}: tool {name!r} is already declared by {where}; "
                    "give one of them another name"
                )
            found[name] = (tool, source)
    return [tool for tool, _ in found.values()]


def is_declared_tool(value: object) -> bool:
    """True for an object (not a class) with a ToolSpec ``spec`` and a callable ``call``."""
    return (
        not isinstance(value, type)
        and isinstance(getattr(value, "spec", None), ToolSpec)
        and callable(getattr(value, "call", None))
    )


def _source_tools(source: str, root: Path) -> list[DeclaredTool]:
    target, _, attribute = _split(source)
    module = _import(source, target, root)
    if not attribute:
        tools = _unique(v for v in vars(module).values() if is_declared_tool(v))
        if not tools:
            raise ConfigError(
                f"catalog source {source!r}: the module declares no tools at module level "
                "(@tool functions, workflows, ArgparseCommands); name a parser or a function "
                "returning tools as 'module:attribute'"
            )
        return tools
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ConfigError(f"catalog source {source!r}: {target} has no attribute {part!r}")
        value = getattr(value, part)
    if callable(value) and not is_declared_tool(value) and not _is_tools(value):
        value = _returned(source, value)
    return _as_tools(source, value)


def _split(source: str) -> tuple[str, str, str]:
    """``target``, ``:``, ``attribute``; a Windows drive letter is not a separator."""
    target, sep, attribute = source.rpartition(":")
    if not sep or (len(target) < 2 and target.isalpha()) or "/" in attribute or "\\" in attribute:
        return source, "", ""
    return target, sep, attribute


def _import(source: str, target: str, root: Path) -> ModuleType:
    is_file = target.endswith(".py") or "/" in target or os.sep in target
    try:
        if not is_file:
            return importlib.import_module(target)
        return _import_file(source, root / target)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(
            f"catalog source {source!r}: cannot import {target}: {type(exc).__name__}: {exc}"
        ) from exc


def _import_file(source: str, path: Path) -> ModuleType:
    path = path.resolve()
    if not path.is_file():
        raise ConfigError(f"catalog source {source!r}: no such file {path}")
    # One module per file, under a name that cannot collide with an importable package.
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"_toolfoundry_source_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"catalog source {source!r}: {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as an import would: dataclasses and pydantic look it up.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _is_tools(value: object) -> bool:
    return isinstance(value, argparse.ArgumentParser | list | tuple)


def _returned(source: str, function: Any) -> Any:
    try:
        inspect.signature(function).bind()
    except TypeError:
        raise ConfigError(
            f"catalog source {source!r}: {_label(function)} needs arguments; declare a function "
            "tool with @tool, or name a function that takes none and returns tools"
        ) from None
    except ValueError:
        pass  # no signature to read (some builtins): just try the call
    try:
        return function()
    except Exception as exc:
        raise ConfigError(
            f"catalog source {source!r}: calling {_label(function)} raised "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def _as_tools(source: str, value: Any) -> list[DeclaredTool]:
    items = list(value) if isinstance(value, list | tuple) else [value]
    tools: list[DeclaredTool] = []
    for item in items:
        if is_declared_tool(item):
            tools.append(item)
        elif isinstance(item, argparse.ArgumentParser):
            from toolfoundry.declare.argparse.parser import from_argparse
            from toolfoundry.declare.errors import DeclarationError

            try:
                tools.extend(from_argparse(item))
            except DeclarationError as exc:
                raise ConfigError(f"catalog source {source!r}: {exc}") from exc
        else:
            raise ConfigError(
                f"catalog source {source!r}: {_label(item)} is not a tool (a @tool function, "
                "a workflow, an ArgparseCommand), an ArgumentParser, or a list of them"
            )
    if not tools:
        raise ConfigError(f"catalog source {source!r}: names no tools (an empty list)")
    return _unique(tools)


def _unique(values: Any) -> list[DeclaredTool]:
    seen: set[int] = set()
    out = []
    for value in values:
        if id(value) not in seen:
            seen.add(id(value))
            out.append(value)
    return out


def _label(value: object) -> str:
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    return f"{name!r}" if isinstance(name, str) else f"a {type(value).__name__}"
