"""What the shared fixtures hand out (tests/conftest.py: ``new_version``, ``mcp_session``), with
the types a test annotates them with, and :func:`error_of`. Import the types from here; ask
for the fixtures."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

from toolfoundry.registry import NewVersion, VersionStatus
from toolfoundry.spec import CallError

if TYPE_CHECKING:
    from pathlib import Path

    from mcp.client.session import ClientSession
    from tests.server.mcp.test_mcp_support import Notifications


def new_version(
    name: str, status: VersionStatus = VersionStatus.ACTIVE, **fields: Any
) -> NewVersion:
    """A small valid version of ``name``: a handler returning its name, no parameters, the
    description ``The NAME tool``; ``fields`` replace or add any of NewVersion's fields."""
    values: dict[str, Any] = {
        "name": name,
        "code": f"export function handler() {{ return {name!r}; }}",
        "description": f"The {name} tool",
        "parameters": {"type": "object", "properties": {}},
        "status": status,
    }
    return NewVersion(**{**values, **fields})


class Failed(Protocol):
    """A call's or a test case's result: its error, when it failed."""

    @property
    def error(self) -> CallError | None: ...


def error_of(result: Failed) -> CallError:
    """The error of a call or test case that must have failed (an assertion when it did not)."""
    assert result.error is not None, f"it did not fail: {result!r}"
    return result.error


class NewVersionFactory(Protocol):
    """The ``new_version`` fixture: :func:`new_version`."""

    def __call__(self, name: str, status: VersionStatus = ..., **fields: Any) -> NewVersion: ...


class McpSessionFactory(Protocol):
    """The ``mcp_session`` fixture: ``async with mcp_session(url, cwd, *serve_args) as
    (session, notifications)``, an initialized session of the official MCP client on a real
    ``toolfoundry serve --db URL`` over stdio (tests/server/mcp/test_mcp_support.py)."""

    def __call__(
        self,
        url: str,
        cwd: Path,
        *extra: str,
        environ: dict[str, str] | None = None,
        errlog: Any = None,
    ) -> AbstractAsyncContextManager[tuple[ClientSession, Notifications]]: ...
