"""``HttpExecutor``: the Executor protocol over ``toolfoundry executor serve``."""

from __future__ import annotations

import time
from typing import Any

import httpx

from toolfoundry.base.json_gate import InvalidJson, check, decode, encode
from toolfoundry.sandbox.host.protocols import FetchProvider
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.wire import (
    RUN_PATH,
    WireError,
    limits_to_dict,
    result_from_dict,
)
from toolfoundry.spec import CallResult, ErrorKind

NETWORK_SLACK_S = 10.0


class HttpExecutor:
    """Sends each call to an executor service (or a load balancer in front of several).

    Args:
        url: the service's base URL, e.g. ``http://10.0.0.5:8700``.
        token: its bearer token.
    """

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self._client = httpx.Client(headers={"Authorization": f"Bearer {token}"})

    def run(
        self,
        code: str,
        args: Any,
        limits: ProcessLimits,
        *,
        tool: str | None = None,
        fetch: FetchProvider | None = None,
    ) -> CallResult:
        """Run remotely; service and transport failures are ``runtime_error`` results.

        The service has no fetch proxy: a call granted fetch is refused here, clearly, rather
        than run without its network.
        """
        started = time.monotonic()

        def fail(kind: ErrorKind, message: str) -> CallResult:
            return CallResult.failure(
                kind, message, duration_ms=(time.monotonic() - started) * 1000
            )

        if fetch is not None:
            return fail(
                ErrorKind.CAPABILITY_DENIED,
                "fetch is not available on a remote executor; run this tool in-process",
            )

        try:
            check(args)
            body = encode(
                {"code": code, "args": args, "tool": tool, "limits": limits_to_dict(limits)}
            )
        except InvalidJson as exc:
            return fail(ErrorKind.INVALID_ARGUMENTS, f"the arguments are not JSON: {exc}")
        try:
            response = self._client.post(
                self.url + RUN_PATH,
                content=body,
                headers={"Content-Type": "application/json"},
                timeout=limits.timeout_s + NETWORK_SLACK_S,
            )
        except httpx.HTTPError as exc:
            return fail(ErrorKind.RUNTIME_ERROR, f"the executor service is unreachable: {exc}")
        if response.status_code != 200:
            try:
                reason = response.json().get("error", response.text)
            except ValueError:
                reason = response.text[:200]
            kind = ErrorKind.CAPABILITY_DENIED if "packages" in reason else ErrorKind.RUNTIME_ERROR
            return fail(
                kind, f"the executor service refused the call ({response.status_code}): {reason}"
            )
        try:
            return result_from_dict(decode(response.content))  # through the JSON gate
        except (ValueError, WireError, RecursionError) as exc:
            return fail(ErrorKind.RUNTIME_ERROR, f"the executor service answered nonsense: {exc}")

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()
