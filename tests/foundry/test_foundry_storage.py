"""localStorage under concurrent calls: the quota's check and write are one step in every backend.

Twelve calls of one tool at once, each writing until ``QuotaExceededError``, must together store
no more than the namespace's quota (bytes, and keys), on SQLite and PostgreSQL through
``Foundry.call``, across two processes on one PostgreSQL, in the shared namespace, and on the
in-memory backend through ``run_js``. A key or value holding U+0000 is refused with the same
error on every backend and by ``toolfoundry js run``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.factories import error_of

from toolfoundry import Foundry
from toolfoundry.config import parse_config
from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.storage import UNAVAILABLE_MESSAGE, MemoryStorage
from toolfoundry.spec.local_storage import StorageQuota

QUOTA = StorageQuota()
THREADS = 12
CHUNK = 200_000  # a value under the 256 KiB limit: ~26 of them fill the 5 MiB quota

# Writes `${id}-0`, `${id}-1`, ... of `size` bytes each until the quota refuses one.
FILL_CODE = """
export function handler({ id, size }) {
  const value = "x".repeat(size);
  let stored = 0;
  for (;;) {
    try {
      localStorage.setItem(`${id}-${stored}`, value);
    } catch (e) {
      if (e.name === "QuotaExceededError") return stored;
      throw e;
    }
    stored += 1;
  }
}
"""


def fill_draft(name: str, storage: bool | str = True) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Fill localStorage with values of a given size until the quota refuses",
        "parameters": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "size": {"type": "integer"}},
            "required": ["id", "size"],
        },
        "code": FILL_CODE,
        "capabilities": {"storage": storage},
        "tests": [{"input": {"id": "t", "size": 300_000}, "expected": 0}],
    }


def open_foundry(url: str) -> Foundry:
    # a slow machine must not end a call before the quota does
    return Foundry.open(url, config=parse_config({"limits": {"timeout_s": 120}}))


def burst(fd: Foundry, tools: list[str], size: int) -> list[int]:
    def one(i: int) -> int:
        out = fd.call(tools[i % len(tools)], {"id": f"c{i}", "size": size})
        assert out.ok, out.to_dict()
        assert isinstance(out.value, int)
        return out.value

    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(one, range(THREADS)))


def test_twelve_concurrent_calls_never_store_over_the_byte_quota(db_url: str) -> None:
    fd = open_foundry(db_url)
    assert fd.create_tool(fill_draft("fill")).status == "active"
    stored = burst(fd, ["fill"], CHUNK)
    count, total = fd.registry.storage.usage("tool:fill")
    assert total <= QUOTA.max_total_bytes, f"{total} bytes stored against {QUOTA.max_total_bytes}"
    assert count == sum(stored)  # every write a call saw succeed is there
    assert total > QUOTA.max_total_bytes - CHUNK - 100  # the quota, not something else, stopped it
    fd.close()


def test_twelve_concurrent_calls_never_store_over_the_key_limit(db_url: str) -> None:
    fd = open_foundry(db_url)
    assert fd.create_tool(fill_draft("keys")).status == "active"
    stored = burst(fd, ["keys"], 1)
    count, _ = fd.registry.storage.usage("tool:keys")
    assert count == sum(stored) == QUOTA.max_keys
    fd.close()


def test_tools_sharing_a_namespace_never_store_over_its_quota(db_url: str) -> None:
    fd = open_foundry(db_url)
    # two writers of one shared namespace: the same code, so the second says why it exists
    second = {"distinct_from": {"name": "share_a", "why": "a second writer of the namespace"}}
    for name, said in (("share_a", {}), ("share_b", second)):
        made = fd.create_tool({**fill_draft(name, storage="shared"), **said})
        assert made.status == "pending_approval", made.to_dict()
        assert fd.approve(name, by="alice").status == "active"
    burst(fd, ["share_a", "share_b"], CHUNK)
    _, total = fd.registry.storage.usage("shared")
    assert QUOTA.max_total_bytes - CHUNK - 100 < total <= QUOTA.max_total_bytes
    fd.close()


PROCESS_BURST = textwrap.dedent(
    """
    import sys
    from concurrent.futures import ThreadPoolExecutor
    from toolfoundry import Foundry
    from toolfoundry.config import parse_config

    fd = Foundry.open(sys.argv[1], config=parse_config({"limits": {"timeout_s": 120}}))
    go = lambda i: fd.call("fill", {"id": sys.argv[2] + str(i), "size": int(sys.argv[3])})
    with ThreadPoolExecutor(6) as pool:
        outs = list(pool.map(go, range(6)))
    assert all(o.ok for o in outs), [o.to_dict() for o in outs]
    print(sum(o.value for o in outs))
    """
)


@pytest.mark.slow
@pytest.mark.postgres
def test_two_processes_on_one_postgresql_never_store_over_the_quota(pg_url: str) -> None:
    fd = open_foundry(pg_url)
    assert fd.create_tool(fill_draft("fill")).status == "active"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROCESS_BURST, pg_url, prefix, str(CHUNK)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for prefix in ("p", "q")
    ]
    written = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        written.append(int(out))
    count, total = fd.registry.storage.usage("tool:fill")
    assert total <= QUOTA.max_total_bytes, f"{total} bytes stored against {QUOTA.max_total_bytes}"
    assert count == sum(written)
    assert total > QUOTA.max_total_bytes - CHUNK - 100
    fd.close()


def test_concurrent_runs_on_the_memory_backend_never_store_over_the_quota() -> None:
    store = MemoryStorage()
    policy = SandboxPolicy(storage=store, storage_namespace="tool:mem", timeout_s=120)

    def one(i: int) -> int:
        out = run_js(FILL_CODE, {"id": f"m{i}", "size": CHUNK}, policy)
        assert out.ok, out.to_dict()
        assert isinstance(out.value, int)
        return out.value

    with ThreadPoolExecutor(THREADS) as pool:
        stored = list(pool.map(one, range(THREADS)))
    count, total = store.usage("tool:mem")
    assert count == sum(stored)
    assert QUOTA.max_total_bytes - CHUNK - 100 < total <= QUOTA.max_total_bytes


# -- U+0000 (NUL): refused alike on every backend (PostgreSQL's text cannot hold it) --------

NUL_CODE = """
export function handler({ op, key, value }) {
  try {
    if (op === "set") localStorage.setItem(key, value);
    if (op === "get") return localStorage.getItem(key);
    if (op === "remove") localStorage.removeItem(key);
    if (op === "index") return localStorage[key] ?? null;
    return ["stored", localStorage.length];
  } catch (e) {
    return [e.name, e.message, localStorage.length];
  }
}
"""
NUL_CASES = [
    ({"op": "set", "key": "a\x00b", "value": "v"}, "key"),
    ({"op": "set", "key": "k", "value": "a\x00b"}, "value"),
    ({"op": "get", "key": "\x00", "value": ""}, "key"),
    ({"op": "remove", "key": "x\x00", "value": ""}, "key"),
    ({"op": "index", "key": "x\x00", "value": ""}, "key"),
]
NUL_MESSAGE = (
    "localStorage: a {} may not contain U+0000 (NUL): no store keeps it; "
    "encode binary data (base64, hex)"
)


def nul_draft() -> dict[str, Any]:
    return {
        "name": "nul",
        "description": "Try a localStorage operation with the given key and value",
        "parameters": {
            "type": "object",
            "properties": {k: {"type": "string"} for k in ("op", "key", "value")},
            "required": ["op", "key", "value"],
        },
        "code": NUL_CODE,
        "capabilities": {"storage": True},
        "tests": [{"input": {"op": "set", "key": "k", "value": "v"}, "expected": ["stored", 1]}],
    }


def expected_refusal(what: str) -> list[Any]:
    return ["TypeError", NUL_MESSAGE.format(what), 0]


def test_a_nul_in_a_key_or_value_is_refused_on_every_registry_store(db_url: str) -> None:
    fd = open_foundry(db_url)
    assert fd.create_tool(nul_draft()).status == "active"
    for args, what in NUL_CASES:
        out = fd.call("nul", args)
        assert out.ok, out.to_dict()
        assert out.value == expected_refusal(what), args
    assert fd.registry.storage.keys("tool:nul") == []
    # uncaught, it is the tool's runtime_error with the same words: no trap, no driver text
    raw = {
        **nul_draft(),
        "name": "nul_raw",
        "code": "export function handler({ key }) {\n  localStorage.setItem(key, 'v');\n}\n",
        "tests": [{"input": {"op": "set", "key": "k", "value": ""}, "expected": None}],
    }
    assert fd.create_tool(raw).status == "active"
    out = fd.call("nul_raw", {"op": "set", "key": "a\x00", "value": ""})
    assert out.error is not None
    assert error_of(out).kind.value == "runtime_error"
    assert NUL_MESSAGE.format("key") in error_of(out).message
    assert "wasm" not in error_of(out).message.lower()
    assert "psycopg" not in error_of(out).message.lower()
    fd.close()


def test_a_nul_is_refused_alike_on_the_memory_backend() -> None:
    store = MemoryStorage()
    policy = SandboxPolicy(storage=store, storage_namespace="tool:nul")
    for args, what in NUL_CASES:
        out = run_js(NUL_CODE, args, policy)
        assert out.ok, out.to_dict()
        assert out.value == expected_refusal(what), args
    assert store.keys("tool:nul") == []


def test_a_nul_is_refused_alike_by_js_run(tmp_path: Path) -> None:
    module = tmp_path / "nul.js"
    module.write_text(NUL_CODE)
    for args, what in NUL_CASES:
        command = ["js", "run", str(module), "--args", json.dumps(args), "--json"]
        done = subprocess.run(
            [sys.executable, "-m", "toolfoundry", *command],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["value"] == expected_refusal(what), args


# Stores a value and reads it back; or catches what storage throws and returns how it failed.
KEEPER_CODE = """
export function handler({ value, caught }) {
  try {
    localStorage.setItem("k", value);
    return localStorage.getItem("k");
  } catch (e) {
    if (!caught) throw e;
    return `${e.name}: ${e.message}`;
  }
}
"""


def rename_storage_table(url: str, old: str, new: str) -> None:
    """Rename localStorage's table from another connection: every storage statement of the
    foundry then fails in the database itself, as on a damaged or unreachable store."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(f"ALTER TABLE {old} RENAME TO {new}"))
    engine.dispose()


def test_a_failing_store_ends_the_call_as_unavailable_in_our_words(db_url: str) -> None:
    fd = open_foundry(db_url)
    draft = {
        "name": "keeper",
        "description": "Store a value in localStorage and read it back.",
        "parameters": {
            "type": "object",
            "properties": {"value": {"type": "string"}, "caught": {"type": "boolean"}},
            "required": ["value"],
        },
        "code": KEEPER_CODE,
        "tests": [{"input": {"value": "a"}, "expected": "a"}],
        "capabilities": {"storage": True},
    }
    assert fd.create_tool(draft).status == "active"
    assert fd.call("keeper", {"value": "x"}).value == "x"
    rename_storage_table(db_url, "tf_storage", "tf_storage_away")
    try:
        out = fd.call("keeper", {"value": "y"})
        error = error_of(out)
        assert error.kind.value == "unavailable", error.message
        assert UNAVAILABLE_MESSAGE in error.message
        for driver_words in ("tf_storage", "no such table", "relation", "sqlite", "psycopg"):
            assert driver_words not in error.message.lower(), error.message
        assert "wasm" not in error.message.lower()
        # caught by the script, it is an error it can read, in the same words
        caught = fd.call("keeper", {"value": "y", "caught": True})
        assert caught.ok, caught.to_dict()
        assert caught.value == f"TypeError: {UNAVAILABLE_MESSAGE}"
    finally:
        rename_storage_table(db_url, "tf_storage_away", "tf_storage")
    assert fd.call("keeper", {"value": "z"}).value == "z"  # the store is back: so are calls
    fd.close()
