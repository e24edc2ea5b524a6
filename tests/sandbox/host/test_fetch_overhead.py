"""What the fetch guard costs per request (run with ``-m slow -s`` to see the figures).

Bounds are generous (shared 2-core CI machines); they catch an order-of-magnitude regression,
such as a refusal that starts resolving names or a connection that stops being closed.
"""

from __future__ import annotations

import ssl
import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.fetch import FetchPolicy

if TYPE_CHECKING:
    from tests.sandbox.host.conftest import LoopbackServer

pytestmark = pytest.mark.slow


def _median_ms(fn: Callable[[], object], rounds: int) -> float:
    fn()
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def test_fetch_overhead(
    allowed: LoopbackServer, tls_server: LoopbackServer, client_tls: ssl.SSLContext
) -> None:
    http_policy = FetchPolicy(
        allow=(f"127.0.0.1:{allowed.port}", f"svc.test:{allowed.port}"),
        allow_http=("127.0.0.1", "svc.test"),
        allow_private=("127.0.0.1",),
        resolver=lambda host: ["127.0.0.1"],
    )
    tls_policy = FetchPolicy(
        allow=(f"secure.test:{tls_server.port}",),
        allow_private=("127.0.0.1",),
        resolver=lambda host: ["127.0.0.1"],
        ssl_context=client_tls,
    )

    def one(policy: FetchPolicy, url: str) -> dict[str, Any]:
        handler = policy.handler(deadline=time.monotonic() + 5, tool="bench")
        return handler.handle({"url": url, "method": "GET", "headers": []})

    refused = _median_ms(lambda: one(http_policy, "http://0x7f000001/"), 2000)
    not_listed = _median_ms(lambda: one(http_policy, "https://elsewhere.example/"), 2000)
    by_ip = _median_ms(lambda: one(http_policy, f"{allowed.base}/bytes?n=100"), 200)
    by_name = _median_ms(
        lambda: one(http_policy, f"http://svc.test:{allowed.port}/bytes?n=100"), 200
    )
    https = _median_ms(lambda: one(tls_policy, f"https://secure.test:{tls_server.port}/echo"), 100)
    code = "export async function handler({ url }) { return (await fetch(url)).status }"
    js_policy = SandboxPolicy(fetch=http_policy)
    args = {"url": f"{allowed.base}/bytes?n=100"}
    js_call = _median_ms(lambda: run_js(code, args, js_policy), 100)
    print(
        f"\nfetch guard, median of many (ms): refused encoding {refused:.3f}, "
        f"not in allowlist {not_listed:.3f}, loopback http by IP {by_ip:.2f}, "
        f"by name (resolver thread) {by_name:.2f}, https with pinning {https:.2f}, "
        f"run_js with one fetch {js_call:.2f}"
    )
    assert refused < 1.0
    assert not_listed < 1.0
    assert by_ip < 25
    assert by_name < 30
    assert https < 30
    assert js_call < 60
