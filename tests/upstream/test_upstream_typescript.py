"""An upstream server written with the official TypeScript SDK (bench/node/upstream_server.mjs)."""

from __future__ import annotations

import time

from tests.factories import error_of
from tests.upstream.conftest import UpstreamFoundry, requires_ts, ts_entry

from toolfoundry.spec import ErrorKind

pytestmark = requires_ts


def test_a_typescript_sdk_server_is_listed_and_called_with_structured_content(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(ts_entry())
    entry = fd.upstream_tool("words.word_stats")
    assert entry is not None
    assert entry.standing.value == "allowed"  # readOnlyHint
    ran = fd.run_js("export default () => tools.words.word_stats({ text: 'one two three' })", {})
    assert ran.value == {"words": 3, "chars": 13}


def test_a_lone_surrogate_and_deep_nesting_from_upstream_are_refused_within_the_budget(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(ts_entry(timeout_s=2.0))
    for kind in ("surrogate", "deep"):  # the official client cannot parse either answer
        began = time.monotonic()
        failed = error_of(fd.call("words.hostile", {"kind": kind}))
        assert failed.kind is ErrorKind.UNAVAILABLE
        assert "cannot read" in failed.message
        assert "\ud800" not in failed.message
        assert time.monotonic() - began < 4.0
    assert fd.call("words.lookup", {"key": "abc"}).value == "abc=3"  # it still serves
