"""Upstream tools in ``search_tools``: ranked by the share of the need their words cover.

Upstream tools are not in the registry's index (they live on their servers), so they are ranked
here over the same words the index reads (registry/search.py's ``document`` and ``terms``): a
hit's ``relevance`` is the share of the query's information (each word weighed by how rare it is
among the upstream tools) that its name, description and parameters hold, and a hit under the
registry's relevance floor is ``weak``, as a registry hit would be. Denied tools are never found;
a tool waiting for a person's approval is found, marked so (``standing``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypedDict

from toolfoundry.catalog.typescript import declaration
from toolfoundry.foundry.upstream_gate import Standing, UpstreamEntry
from toolfoundry.registry.search import RELEVANCE_FLOOR, document, terms


class UpstreamHitJson(TypedDict):
    """An upstream tool as a ``search_tools`` hit (a registry hit's fields, and ``upstream``
    and ``standing``)."""

    name: str
    description: str
    upstream: str
    standing: str
    strength: str
    relevance: float
    matched: list[str]
    signature: str


def upstream_hits(query: str, entries: Sequence[UpstreamEntry], k: int) -> list[UpstreamHitJson]:
    """The ``k`` best upstream tools for ``query``, as search hits (``upstream: true``)."""
    words = terms(query)
    shown = [e for e in entries if e.standing is not Standing.DENIED]
    if not words or not shown:
        return []
    docs = [_words(e) for e in shown]
    weights = {w: math.log(1.0 + len(docs) / (1 + sum(w in d for d in docs))) for w in words}
    total = sum(weights.values()) or 1.0
    scored = []
    for entry, doc in zip(shown, docs, strict=True):
        matched = [w for w in words if w in doc]
        if matched:
            relevance = round(sum(weights[w] for w in matched) / total, 4)
            scored.append((relevance, entry, matched))
    scored.sort(key=lambda found: (-found[0], found[1].tool.name))
    return [_hit(entry, relevance, matched) for relevance, entry, matched in scored[:k]]


def _words(entry: UpstreamEntry) -> set[str]:
    tool = entry.tool
    name, description, params = document(tool.name, tool.description, tool.input_schema)
    return set(terms(f"{name} {tool.upstream} {description} {params}"))


def _hit(entry: UpstreamEntry, relevance: float, matched: list[str]) -> UpstreamHitJson:
    tool = entry.tool
    return {
        "name": tool.name,
        "description": tool.description,
        "upstream": tool.upstream,
        "standing": entry.standing.value,
        "strength": "strong" if relevance >= RELEVANCE_FLOOR else "weak",
        "relevance": relevance,
        "matched": matched,
        "signature": declaration(tool.spec()).signature,
    }


def merged_hits(
    registry_hits: list[dict[str, Any]], upstream: list[UpstreamHitJson], k: int
) -> list[dict[str, Any]]:
    """Registry and upstream hits together, strong ones first, each kind keeping its order,
    by relevance within a strength; at most ``k``."""
    both = [(0, i, h) for i, h in enumerate(registry_hits)] + [
        (1, i, dict(h)) for i, h in enumerate(upstream)
    ]
    both.sort(key=lambda x: (x[2].get("strength") != "strong", -float(x[2].get("relevance", 0))))
    return [hit for _, _, hit in both[:k]]
