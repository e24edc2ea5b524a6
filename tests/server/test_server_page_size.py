"""``toolfoundry serve --page-size N``: a served tools/list and resources/list page at N, through
the CLI and the official MCP client over stdio; an out-of-range N is a usage error."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from click.testing import CliRunner
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.registry import NewVersion, VersionStatus
from toolfoundry.spec.names import META_TOOL_NAMES

from .mcp.test_mcp_support import env

NAMES = [f"tool_{i}" for i in range(5)]


def seed(url: str) -> None:
    with Foundry.open(url) as fd:
        for name in NAMES:
            fd.registry.add_version(
                NewVersion(
                    name=name,
                    code="export const handler = () => 1;",
                    description=f"the {name} tool",
                    parameters={"type": "object", "properties": {}},
                    status=VersionStatus.ACTIVE,
                )
            )


def test_served_lists_page_at_the_given_size(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    seed(url)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolfoundry", "serve", "--db", url, "--page-size", "3"],
        env=env(),
        cwd=str(tmp_path),
    )

    async def scenario() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            pages: list[list[str]] = []
            cursor: str | None = None
            while True:
                listed = await session.list_tools(
                    params=types.PaginatedRequestParams(cursor=cursor)
                )
                pages.append([tool.name for tool in listed.tools])
                cursor = listed.next_cursor
                if cursor is None:
                    break
            assert all(len(page) == 3 for page in pages[:-1])
            assert 1 <= len(pages[-1]) <= 3
            assert [n for page in pages for n in page] == [*META_TOOL_NAMES, *NAMES]

            first = await session.list_resources()
            assert len(first.resources) == 7  # the types, three tools' source and tests
            assert first.next_cursor is not None
            second = await session.list_resources(
                params=types.PaginatedRequestParams(cursor=first.next_cursor)
            )
            assert len(second.resources) == 4
            assert second.next_cursor is None

    anyio.run(scenario)


@pytest.mark.parametrize("size", ["0", "10001", "-1", "1.5", "nan", "9" * 400])
def test_page_size_out_of_range_is_a_usage_error(tmp_path: Path, size: str) -> None:
    result = CliRunner().invoke(
        main, ["serve", "--db", f"sqlite:///{tmp_path / 'r.db'}", "--page-size", size]
    )
    assert result.exit_code == 2, result.output
    assert "--page-size" in result.output
    assert "Traceback" not in result.output
