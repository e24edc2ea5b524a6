"""Which tools a catalogue lists: the built-in meta-tools, plus whatever a caller adds."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from toolfoundry.spec import ToolSpec


def builtin_specs() -> list[ToolSpec]:
    """Specs of the foundry's meta-tools (``toolfoundry.foundry.meta_tools.builtin_tools``).

    Imported on call so that the catalog layer does not load the foundry for pure rendering.
    Returns an empty list while the built-ins module does not exist yet.
    """
    try:
        module = importlib.import_module("toolfoundry.foundry.meta_tools")
    except ModuleNotFoundError as exc:
        if exc.name != "toolfoundry.foundry.meta_tools":
            raise
        return []
    return [tool.spec for tool in module.builtin_tools()]


def installed_specs(extra: Iterable[ToolSpec] = ()) -> list[ToolSpec]:
    """Built-ins plus ``extra`` (e.g. the registry's active tools); an extra spec with a
    built-in's name replaces it."""
    by_name = {spec.name: spec for spec in builtin_specs()}
    for spec in extra:
        by_name[spec.name] = spec
    return list(by_name.values())
