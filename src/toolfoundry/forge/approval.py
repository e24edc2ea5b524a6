"""Approval binding: an approval holds for one exact code and one exact capability set.

The registry stores ``code_sha256`` and ``capabilities_hash`` (both from
:mod:`toolfoundry.spec.binding`) with every version and approval record, and the foundry checks
them here before activating a version, so changing a byte of code or widening a
capability needs a new approval. What a reviewer sees is built by
:mod:`toolfoundry.foundry.review` from the registry's records, with :func:`code_diff` and
:func:`explain_capabilities` from here.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NotRequired

from typing_extensions import TypedDict

from toolfoundry.forge.host_display import host_label, host_view
from toolfoundry.spec import Capabilities, StorageScope, capabilities_hash, code_sha256

# The hashes live in spec (one implementation for the forge, the registry and the check);
# they stay importable from here and from toolfoundry.forge.
__all__ = [
    "ApprovalBinding",
    "ApprovalCheck",
    "capabilities_hash",
    "check_approval",
    "code_diff",
    "code_sha256",
    "explain_capabilities",
]


@dataclass(frozen=True)
class ApprovalBinding:
    """What an approval is bound to: the code hash and the capability-set hash."""

    code_sha256: str
    capabilities_hash: str

    @classmethod
    def of(
        cls, code: str, capabilities: Capabilities, language: str = "javascript"
    ) -> ApprovalBinding:
        """The binding of a version with this code and these capabilities."""
        return cls(code_sha256(code), capabilities_hash(capabilities, language))

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"code_sha256": self.code_sha256, "capabilities_hash": self.capabilities_hash}


@dataclass(frozen=True)
class ApprovalCheck:
    """Whether an approval record covers a version, and every reason it does not."""

    valid: bool
    problems: tuple[str, ...] = ()


def check_approval(
    record: Mapping[str, Any] | object,
    *,
    code: str,
    capabilities: Capabilities,
    language: str = "javascript",
) -> ApprovalCheck:
    """Check an approval record (a mapping or an object with the same attributes).

    The record needs ``code_sha256`` and ``capabilities_hash``; when it has ``decision``, it
    must be ``"approved"``.
    """

    def field(name: str) -> Any:
        if isinstance(record, Mapping):
            return record.get(name)
        return getattr(record, name, None)

    expected = ApprovalBinding.of(code, capabilities, language)
    problems: list[str] = []
    decision = field("decision")
    if decision is not None and decision != "approved":
        problems.append(f"the record's decision is {decision!r}, not 'approved'")
    if field("code_sha256") != expected.code_sha256:
        problems.append("the code changed since the approval (sha256 differs)")
    if field("capabilities_hash") != expected.capabilities_hash:
        problems.append("the capability set changed since the approval")
    return ApprovalCheck(not problems, tuple(problems))


class CapabilityExplained(TypedDict):
    """One requested capability as a reviewer reads it: ``capability`` (``network``,
    ``credentials``, ``storage``, ``system``), its ``value`` (a host, the storage scope, or
    true), what it lets the tool do; a host also in both forms (``shown``, ``host``)."""

    capability: str
    value: str | bool
    meaning: str
    shown: NotRequired[str]
    host: NotRequired[dict[str, str | None]]


def explain_capabilities(
    capabilities: Capabilities, language: str = "javascript"
) -> list[CapabilityExplained]:
    """Each requested capability with what it lets the tool do, for a human reviewer."""
    out: list[CapabilityExplained] = []
    # a host is shown in both forms, with a warning for a lookalike (forge/host_display.py)
    for host in capabilities.network:
        out.append(
            {
                "capability": "network",
                "value": host,
                "shown": host_label(host),
                "host": host_view(host).to_dict(),
                "meaning": f"may send HTTP requests to {host_label(host)} (and read the "
                "answers); data the tool is given can leave this machine",
            }
        )
    for host in capabilities.credentials:
        out.append(
            {
                "capability": "credentials",
                "value": host,
                "shown": host_label(host),
                "host": host_view(host).to_dict(),
                "meaning": f"requests to {host_label(host)} carry the secret the host's "
                "configuration binds to it, added by the host; the tool never sees it but acts "
                "with its authority",
            }
        )
    if capabilities.storage is StorageScope.TOOL:
        out.append(
            {
                "capability": "storage",
                "value": "tool",
                "meaning": "keeps data between calls in its own localStorage namespace",
            }
        )
    elif capabilities.storage is StorageScope.SHARED:
        out.append(
            {
                "capability": "storage",
                "value": "shared",
                "meaning": "reads and writes localStorage shared with other tools",
            }
        )
    if capabilities.system or language == "python":
        out.append(
            {
                "capability": "system",
                "value": True,
                "meaning": "runs as a Python process under OS isolation (bubblewrap)",
            }
        )
    return out


def code_diff(previous: str | None, current: str, name: str = "handler.js") -> str:
    """Unified diff of two versions' code (against nothing for a first version)."""
    return "\n".join(
        difflib.unified_diff(
            (previous or "").splitlines(),
            current.splitlines(),
            f"a/{name}" if previous is not None else "/dev/null",
            f"b/{name}",
            lineterm="",
        )
    )
