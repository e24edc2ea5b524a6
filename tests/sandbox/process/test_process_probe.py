"""The Python tier is probed once, under a lock: a cold burst of calls in a fresh process all run.

The first calls of a process find the tier not yet probed. Each must wait for the one probe
(and the one warm pool it starts), never read "probing" as "unavailable": that transient
state once answered five of six concurrent calls ``capability_denied``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from toolfoundry import Foundry
from toolfoundry.config import Config
from toolfoundry.sandbox.process import JailConfig, probe

CALLS = 6

ADD = {
    "name": "add",
    "description": "Add two integers.",
    "language": "python",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    "code": "def handler(args):\n    return args['a'] + args['b']\n",
    "tests": [{"input": {"a": 1, "b": 2}, "expected": 3}],
}

# A fresh process: six threads released at once make the process's first Python calls.
BURST = textwrap.dedent(
    """
    import json, sys, threading
    from concurrent.futures import ThreadPoolExecutor
    from toolfoundry import Foundry

    fd = Foundry.open(sys.argv[1])
    start = threading.Barrier(int(sys.argv[2]))

    def one(i):
        start.wait()
        return fd.call("add", {"a": i, "b": 1}).to_dict()

    with ThreadPoolExecutor(int(sys.argv[2])) as pool:
        results = list(pool.map(one, range(int(sys.argv[2]))))
    pools = sum(type(t).__name__ == "Thread" and t.name == "warm-pool"
                for t in threading.enumerate())
    print(json.dumps({"results": results, "pools": pools}))
    fd.close()
    """
)


def test_a_cold_burst_of_python_calls_in_a_fresh_process_all_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url, config=Config()) as fd:
        assert fd.create_tool(ADD).status == "pending_approval"
        assert fd.approve("add", by="alice").status == "active"
    done = subprocess.run(
        [sys.executable, "-c", BURST, url, str(CALLS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    outcomes = [(r["ok"], r["value"], r["error"]) for r in report["results"]]
    assert outcomes == [(True, i + 1, None) for i in range(CALLS)]
    assert report["pools"] == 1  # one probe started one warm pool


def test_a_slow_jail_is_not_an_unavailable_one() -> None:
    # no runner is ready within a millisecond: still starting is not a refusal
    assert probe(timeout=0.001) is None
    refused = probe(JailConfig(bwrap="/bin/false"), timeout=10)
    assert refused is not None
    assert "could not start a jail" in refused
