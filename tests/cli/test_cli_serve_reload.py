"""``toolfoundry serve`` follows toolfoundry.toml: changes apply without a restart.

One real ``serve --http`` process on loopback whose configuration file is edited while it
runs: a change seen by its modification time, one seen only on SIGHUP (same size, modification
time put back), an invalid file (kept the old configuration), and a key that needs a restart.
The effect is observed through the HTTP API: ``[limits] output_bytes`` decides whether a call
returning 5000 characters is ``output_too_large``. The reloader's rules are also checked on a
Foundry directly (fast).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from toolfoundry import Foundry
from toolfoundry.foundry.config_reload import ConfigReloader

REPEAT = {
    "name": "repeat_x",
    "description": "Repeat the letter x n times.",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    "code": 'export function handler({ n }) { return "x".repeat(n); }',
    "tests": [{"input": {"n": 2}, "expected": "xx"}],
}


def _limits(output_bytes: int) -> str:
    return f"[limits]\noutput_bytes = {output_bytes}\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _serving(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int, list[str]]]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLFOUNDRY_DB", "TOOLFOUNDRY_TOKEN")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolfoundry",
            "serve",
            "--http",
            f"127.0.0.1:{port}",
            "--db",
            f"sqlite:///{tmp_path / 'r.db'}",
        ],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    announced = threading.Event()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if any(x.startswith("toolfoundry: review page") for x in lines):
                announced.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        assert announced.wait(60), lines
        yield proc, port, lines
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _wait_for(lines: list[str], wanted: str, seen: int) -> list[str]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        new = lines[seen:]
        if any(wanted in line for line in new):
            return new
        time.sleep(0.05)
    raise AssertionError(f"no {wanted!r} in {lines[seen:]}")


@pytest.mark.slow
def test_serve_reloads_its_config_on_change_and_on_sighup(tmp_path: Path) -> None:
    config = tmp_path / "toolfoundry.toml"
    config.write_text(_limits(1024), encoding="utf-8")
    with _serving(tmp_path) as (proc, port, lines):
        api = f"http://127.0.0.1:{port}/api"
        created = httpx.post(f"{api}/tools", json=REPEAT, timeout=30)
        assert created.status_code == 201, created.text

        def call() -> dict[str, object]:
            out = httpx.post(f"{api}/tools/repeat_x/call", json={"args": {"n": 5000}}, timeout=30)
            return dict(out.json())

        assert call()["error"]["kind"] == "output_too_large"  # type: ignore[index]

        # 1. the modification time: the new limit is used by the next call
        seen = len(lines)
        config.write_text(_limits(1000000), encoding="utf-8")
        new = _wait_for(lines, "reloaded", seen)
        assert any("limits.output_bytes in use now" in line for line in new), new
        assert call()["ok"] is True

        # 2. SIGHUP: same size and modification time, so only the signal makes it re-read
        stamp = config.stat()
        config.write_text(_limits(1000000).replace("1000000", "1024   "), encoding="utf-8")
        os.utime(config, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        assert config.stat().st_size == stamp.st_size
        time.sleep(1.5)  # two mtime checks pass: nothing reloads without the signal
        assert call()["ok"] is True
        seen = len(lines)
        proc.send_signal(signal.SIGHUP)
        _wait_for(lines, "limits.output_bytes in use now", seen)
        assert call()["error"]["kind"] == "output_too_large"  # type: ignore[index]

        # 3. an invalid file is reported and the previous configuration kept
        seen = len(lines)
        config.write_text("[limits]\noutput_bytes = 'lots'\n", encoding="utf-8")
        new = _wait_for(lines, "keeping the previous configuration", seen)
        assert any("output_bytes" in line for line in new), new
        assert call()["error"]["kind"] == "output_too_large"  # type: ignore[index]

        # 4. the database URL needs a restart: said, and not applied
        seen = len(lines)
        other = f"sqlite:///{tmp_path / 'other.db'}"
        config.write_text(_limits(1024) + f'[registry]\nurl = "{other}"\n', encoding="utf-8")
        new = _wait_for(lines, "takes a restart", seen)
        assert any("registry.url" in line for line in new), new
        assert httpx.get(f"{api}/tools", timeout=10).json()[0]["name"] == "repeat_x"
        assert proc.poll() is None


def _reloader(tmp_path: Path, text: str) -> tuple[Foundry, ConfigReloader, list[str]]:
    path = tmp_path / "toolfoundry.toml"
    path.write_text(text, encoding="utf-8")
    foundry = Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=path)
    said: list[str] = []
    return foundry, ConfigReloader(foundry, path, said.append), said


def _rewrite(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns == before:  # a coarse clock: make the change visible
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def test_hot_keys_apply_and_restart_keys_keep_their_value(tmp_path: Path) -> None:
    foundry, reloader, said = _reloader(
        tmp_path, '[fetch]\nallow_http = ["a.test"]\n[limits]\npython_queue_s = 5\n'
    )
    with foundry:
        assert reloader.check().changed is False  # unchanged file: nothing to do
        path = reloader.path
        _rewrite(path, '[fetch]\nallow_http = ["b.test"]\n[limits]\npython_queue_s = 9\n')
        found = reloader.check()
        assert found.applied == ("fetch.allow_http",)
        assert found.restart == ("limits.python_queue_s",)
        assert foundry.config.fetch.allow_http == ("b.test",)
        assert foundry.config.python_queue_s == 5  # kept until a restart
        assert any("takes a restart" in line for line in said)
        # forced (SIGHUP) with nothing new: only the reminder of the pending restart key
        again = reloader.check(force=True)
        assert again.applied == ()
        assert again.restart == ("limits.python_queue_s",)


def test_an_invalid_file_keeps_the_configuration_in_use(tmp_path: Path) -> None:
    foundry, reloader, said = _reloader(tmp_path, "[limits]\ntimeout_s = 2\n")
    with foundry:
        for bad in ("[limits\n", "[limits]\ntimeout_s = -1\n", "[nonsense]\nx = 1\n"):
            _rewrite(reloader.path, bad)
            found = reloader.check()
            assert found.error is not None
            assert found.applied == ()
            assert foundry.config.limits.timeout_s == 2
        assert all("keeping the previous configuration" in line for line in said)
        _rewrite(reloader.path, "[limits]\ntimeout_s = 3\n")
        assert reloader.check().applied == ("limits.timeout_s",)
        assert foundry.config.limits.timeout_s == 3


def test_a_removed_file_means_the_defaults(tmp_path: Path) -> None:
    foundry, reloader, _ = _reloader(tmp_path, "[limits]\ntimeout_s = 2\n")
    with foundry:
        reloader.path.unlink()
        assert reloader.check().applied == ("limits.timeout_s",)
        assert foundry.config.limits.timeout_s == Foundry(foundry.registry).config.limits.timeout_s


def test_the_thread_reloads_on_request(tmp_path: Path) -> None:
    foundry, reloader, said = _reloader(tmp_path, "[limits]\ntimeout_s = 2\n")
    stamp = reloader.path.stat()
    reloader.path.write_text("[limits]\ntimeout_s = 4\n", encoding="utf-8")  # same size
    os.utime(reloader.path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    wait: Callable[[], bool] = lambda: foundry.config.limits.timeout_s == 4  # noqa: E731
    with foundry:
        reloader.start()
        try:
            time.sleep(0.2)
            assert not wait()  # same stamp: the periodic check sees nothing
            reloader.request()
            deadline = time.monotonic() + 5
            while not wait() and time.monotonic() < deadline:
                time.sleep(0.02)
            assert wait(), said
        finally:
            reloader.stop()
