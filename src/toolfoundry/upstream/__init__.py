"""Upstream MCP servers: the user's other servers, reached from code mode through one gate.

``[[upstream]]`` entries of toolfoundry.toml (:mod:`~toolfoundry.upstream.settings`) name each
server: a stdio command or a Streamable HTTP URL, with credentials the host holds. The official
MCP client holds each session (:mod:`~toolfoundry.upstream.connection`: every page of tools,
``notifications/tools/list_changed`` followed, reconnects with backoff), all on one event loop
(:mod:`~toolfoundry.upstream.servers`). Each listed tool is checked once
(:mod:`~toolfoundry.upstream.listing`), judged by one rule (:mod:`~toolfoundry.upstream.policy`),
and its answers pass the JSON gate with credentials redacted
(:mod:`~toolfoundry.upstream.answers`).

This package knows no registry: approvals, usage, audit and dependencies are the foundry's
(``foundry/upstream_gate.py``). The sandbox knows nothing of it either: a snippet reaches an
upstream tool through the same ``tools`` seam as a registry tool. The MCP SDK is imported only
when a connection starts, so a process with no upstream loads none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry.base.lazy import lazy_names

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.upstream.connection import UpstreamState, UpstreamStatus
    from toolfoundry.upstream.listing import UpstreamTool, schema_hash
    from toolfoundry.upstream.policy import Rule, Verdict, verdict
    from toolfoundry.upstream.servers import UpstreamServers
    from toolfoundry.upstream.settings import UpstreamCredential, UpstreamPolicy, UpstreamSettings

# Each name loads its module on first use: reading toolfoundry.toml (config.py reads the
# [[upstream]] settings) loads settings.py alone, not the listing's JSON Schema validator.
_LAZY = {
    "UpstreamState": "toolfoundry.upstream.connection",
    "UpstreamStatus": "toolfoundry.upstream.connection",
    "UpstreamTool": "toolfoundry.upstream.listing",
    "schema_hash": "toolfoundry.upstream.listing",
    "Rule": "toolfoundry.upstream.policy",
    "Verdict": "toolfoundry.upstream.policy",
    "verdict": "toolfoundry.upstream.policy",
    "UpstreamServers": "toolfoundry.upstream.servers",
    "UpstreamCredential": "toolfoundry.upstream.settings",
    "UpstreamPolicy": "toolfoundry.upstream.settings",
    "UpstreamSettings": "toolfoundry.upstream.settings",
}
__getattr__ = lazy_names(__name__, _LAZY)

__all__ = [
    "Rule",
    "UpstreamCredential",
    "UpstreamPolicy",
    "UpstreamServers",
    "UpstreamSettings",
    "UpstreamState",
    "UpstreamStatus",
    "UpstreamTool",
    "Verdict",
    "schema_hash",
    "verdict",
]
