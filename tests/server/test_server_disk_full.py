"""A full disk under ``toolfoundry serve --http`` on SQLite: a real one, made by ``RLIMIT_FSIZE``
on the server process (SQLite's writes past the limit fail with EFBIG, "disk I/O error").

Creates and calls answer a structured 503 of kind ``unavailable`` over the HTTP API and MCP,
never a bare text/plain 500; ``/healthz`` says the registry cannot be written; nothing half
written is left; once the limit is lifted the same server writes and reports healthy again.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from tests.server.mcp.test_mcp_support import env, free_port, http_session
from tests.server.test_server_web_support import csrf_of
from tests.shared_drafts import WORD_COUNT

from toolfoundry import Foundry

# a tool of its own behaviour, whose 200 KB of code cannot fit in what is left
LENGTH: dict[str, Any] = {
    "name": "length",
    "description": "The length of a text in characters.",
    "parameters": WORD_COUNT["parameters"],
    "code": "export function handler({ text }) { return text.length; }\n//" + "x" * 200_000,
    "tests": [{"input": {"text": "ab"}, "expected": 2}],
}


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], str]]:
    """``serve --http`` over a registry with word_count, whose files may grow by 8 KiB."""
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url) as fd:
        assert fd.create_tool(WORD_COUNT).status == "active"
    files = [p for p in tmp_path.iterdir() if p.name.startswith("registry.db")]
    limit = max(p.stat().st_size for p in files) + 8192
    port = free_port()

    def cap() -> None:  # in the server process only
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    log = (tmp_path / "serve.log").open("w")
    command = [sys.executable, "-m", "toolfoundry", "serve", "--db", url]
    proc = subprocess.Popen(
        [*command, "--http", f"127.0.0.1:{port}"],
        cwd=tmp_path,
        env=env(),
        stderr=log,
        preexec_fn=cap,  # a resource limit for the child, set before exec
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                httpx.get(base + "/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve did not listen"
                time.sleep(0.1)
        yield base, proc, url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def unavailable(response: httpx.Response) -> dict[str, Any]:
    """The structured error of a 503 (CallResult or API error shape)."""
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/json"
    error: dict[str, Any] = response.json()["error"]
    assert error["kind"] == "unavailable"
    assert "registry database" in error["message"]
    return error


def test_a_full_disk_is_a_structured_503_and_health_says_so(
    full_disk: tuple[str, subprocess.Popen[bytes], str],
) -> None:
    base, proc, url = full_disk
    with httpx.Client(base_url=base, timeout=60) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        error = unavailable(client.post("/api/tools", json=LENGTH))
        assert "nothing was stored" in error["message"]
        answers = [
            client.post("/api/tools/word_count/call", json={"args": {"text": "a b"}})
            for _ in range(40)
        ]
        assert {a.status_code for a in answers} <= {200, 503}  # never a bare 500
        failed = [a for a in answers if a.status_code != 200]
        assert failed, "the file-size limit never stopped a call's record"
        error = unavailable(failed[0])
        assert "could not record it" in error["message"]
        assert failed[0].json()["value"] is None  # an unrecorded call's value is withheld
        health = client.get("/healthz")
        assert health.status_code == 503
        assert health.json() == {
            "status": "unavailable",
            "reason": "the registry database cannot be written",
        }
        # every other API answer is the same structured 503, not a 500
        # (a rollback to the current version: a write that changes nothing a call sees)
        back = client.post("/api/tools/word_count/rollback", json={"version": 1, "by": "ops"})
        assert back.status_code in (200, 503), back.text  # a small write may still fit
        if back.status_code == 503:
            unavailable(back)

        async def through_mcp() -> None:
            port = int(base.rsplit(":", 1)[1])
            async with http_session(port) as (session, _notes):
                called = await session.call_tool("word_count", {"text": "a b"})
                made = await session.call_tool("create_tool", {**LENGTH, "name": "length2"})
            for result in (called, made):
                assert result.is_error
                assert result.structured_content is not None
                assert result.structured_content["error"]["kind"] == "unavailable"

        anyio.run(through_mcp)

        # the disk has room again: the same server writes and is healthy at once
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
        ok = client.post("/api/tools/word_count/call", json={"args": {"text": "a b c"}})
        assert ok.status_code == 200, ok.text
        assert ok.json()["value"] == 3
        assert client.get("/healthz").json() == {"status": "ok"}
    proc.terminate()
    proc.wait(timeout=20)
    with Foundry.open(url) as fd:  # nothing half-written: the failed create left no trace
        assert [v.name for v in fd.tools()] == ["word_count"]
        assert fd.call("word_count", {"text": "x y"}).value == 2
    assert os.path.exists(url.removeprefix("sqlite:///"))


def test_a_page_form_under_a_full_disk_is_a_503_page_with_the_reason(
    full_disk: tuple[str, subprocess.Popen[bytes], str],
) -> None:
    """The review page's posts meet the same failure as the API and say it as a page."""
    base, _proc, _url = full_disk
    with httpx.Client(base_url=base, timeout=60) as client:
        for _ in range(40):  # fill what is left with call records
            if client.post("/api/tools/word_count/call", json={"args": {"text": "a"}}).is_error:
                break
        answers = []
        for action in ["disable", "enable"] * 20:  # each an audit row: one stops fitting
            page = client.get("/ui/tools/word_count")
            assert page.status_code == 200, page.text
            token = csrf_of(page.text)
            answer = client.post(
                f"/ui/tools/word_count/{action}",
                data={"csrf_token": token, "by": "ops"},
                headers={"origin": base},
            )
            answers.append(answer)
            if answer.status_code != 303:
                break
        assert {a.status_code for a in answers} <= {303, 503}  # never a bare 500
        failed = answers[-1]
        assert failed.status_code == 503, "the file-size limit never stopped a page's write"
        assert failed.headers["content-type"].startswith("text/html")
        shown = " ".join(re.sub(r"<[^>]+>", " ", failed.text).split())
        assert "the registry database could not be read or written" in shown
        assert "retry later" in shown
