"""Admission control through the Foundry: ``[limits] python_total_mib`` bounds the
Python tier's concurrent calls and draft test runs together; a draft whose tests find no room
is not judged. Real jails."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from toolfoundry import Foundry
from toolfoundry.config import parse_config

NAP = {
    "name": "nap",
    "description": "Sleeps for a while.",
    "language": "python",
    "parameters": {"type": "object", "properties": {"s": {"type": "number"}}},
    "code": "import time\n\ndef handler(args):\n    time.sleep(args['s'])\n    return args['s']\n",
    "tests": [{"input": {"s": 0}, "expected": 0}],
}


@pytest.mark.slow
def test_the_foundry_admits_calls_and_draft_tests_by_the_configured_total(tmp_path: Path) -> None:
    # the tier's calls get 512 MiB each: a total of 1024 MiB admits two at once
    config = parse_config({"limits": {"python_total_mib": 1024, "python_queue_s": 0.5}})
    draft = json.loads(json.dumps(NAP))
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=config) as fd:
        created = fd.create_tool(draft)
        assert created.status == "pending_approval", created.to_dict()
        fd.approve("nap", by="alice")
        holders = [threading.Thread(target=fd.call, args=("nap", {"s": 2.5})) for _ in range(2)]
        for holder in holders:
            holder.start()
        time.sleep(0.8)  # both hold the budget now
        third = fd.call("nap", {"s": 0})
        again = fd.create_tool({**draft, "name": "nap_two"})  # a draft's tests wait too
        for holder in holders:
            holder.join()
        assert third.error is not None
        assert third.error.kind.value == "overloaded", third.to_dict()
        assert again.status == "rejected"
        assert again.step.status.value == "unavailable"
        assert again.step.details["kind"] == "overloaded"  # not judged: retry later
        assert "nap_two" not in [t.name for t in fd.tools(include_inactive=True)]  # nothing kept
        assert fd.call("nap", {"s": 0}).ok  # room again
