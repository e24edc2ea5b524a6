"""What a tool may reach beyond pure computation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from typing_extensions import TypedDict


class StorageScope(StrEnum):
    """Where a tool's localStorage lives: none, its own namespace, or one shared across tools."""

    NONE = "none"
    TOOL = "tool"
    SHARED = "shared"


KNOWN_CAPABILITIES = ("network", "credentials", "storage", "system")


class CapabilitiesJson(TypedDict, total=False):
    """Capabilities beyond computation; any of them makes the tool wait for human approval."""

    network: list[str]
    credentials: list[str]
    storage: bool | StorageScope
    system: bool


# What pydantic reads (create_tool's parameters, the OpenAPI Draft): an unknown key is refused.
CapabilitiesJson.__pydantic_config__ = {"extra": "forbid"}  # type: ignore[attr-defined]


class UnknownCapability(ValueError):
    """A draft asked for a capability the foundry does not know."""


@dataclass(frozen=True)
class Capabilities:
    """The capability set a tool requests. Empty means a pure local tool.

    Attributes:
        network: host patterns the tool may fetch (``api.example.com``, ``*.example.com``,
            ``host:8443``).
        credentials: hosts for which the host injects a configured credential header.
        storage: localStorage scope.
        system: needs OS-level access (the Python tier); always reviewed by a human.
    """

    network: tuple[str, ...] = ()
    credentials: tuple[str, ...] = ()
    storage: StorageScope = StorageScope.NONE
    system: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "network", tuple(sorted(set(self.network))))
        object.__setattr__(self, "credentials", tuple(sorted(set(self.credentials))))
        object.__setattr__(self, "storage", StorageScope(self.storage))

    @property
    def is_pure(self) -> bool:
        """True when the tool only computes: no network, credentials, storage or system access."""
        return self == Capabilities()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Capabilities:
        """Parse the draft form (``{"network": [...], "storage": true}``); unknown keys raise."""
        if not data:
            return cls()
        if not isinstance(data, Mapping):
            raise UnknownCapability("capabilities must be an object")
        unknown = sorted(set(data) - set(KNOWN_CAPABILITIES))
        if unknown:
            raise UnknownCapability(
                f"unknown capabilities {unknown}; known: {list(KNOWN_CAPABILITIES)}"
            )
        storage = data.get("storage", False)
        if storage is True:
            storage = StorageScope.TOOL
        elif storage is False or storage is None:
            storage = StorageScope.NONE
        return cls(
            network=tuple(_strings(data.get("network", ()), "network")),
            credentials=tuple(_strings(data.get("credentials", ()), "credentials")),
            storage=StorageScope(storage),
            system=bool(data.get("system", False)),
        )

    def to_dict(self) -> CapabilitiesJson:
        """Compact draft form: only the capabilities actually requested."""
        out: CapabilitiesJson = {}
        if self.network:
            out["network"] = list(self.network)
        if self.credentials:
            out["credentials"] = list(self.credentials)
        if self.storage is not StorageScope.NONE:
            out["storage"] = True if self.storage is StorageScope.TOOL else self.storage
        if self.system:
            out["system"] = True
        return out


def _strings(value: object, field: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise UnknownCapability(f"capabilities.{field} must be a list of strings")
    if not all(isinstance(v, str) and v for v in value):
        raise UnknownCapability(f"capabilities.{field} must be a list of non-empty strings")
    return list(value)
