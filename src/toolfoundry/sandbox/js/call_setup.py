"""What one JavaScript call is given: its host capabilities and its limits, from a policy.

The one place a call is set up: a tool's call (``run.run_js``) and the trusted call that
compiles a bundled library (``run._compile_library``) both come through :func:`set_up_call`, so
a capability added to :class:`~toolfoundry.sandbox.SandboxPolicy` reaches the guest through one
line here.
"""

from __future__ import annotations

from toolfoundry.sandbox.host.storage import StorageHook
from toolfoundry.sandbox.js.engine import Limits
from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.sandbox.js.modules import LibraryCatalog
from toolfoundry.sandbox.policy import SandboxPolicy


def set_up_call(
    policy: SandboxPolicy,
    *,
    started: float,
    libraries: LibraryCatalog,
    trusted: bool = False,
) -> tuple[CallHost, Limits]:
    """The host and limits of one call under ``policy``, begun at ``started``.

    Args:
        policy: the call's limits and capabilities.
        started: the ``time.monotonic()`` instant the call's budget counts from.
        libraries: the bundled libraries the call may import.
        trusted: True only for a call the host runs itself with no tool code in it (it may
            hand library bytecode to the process-wide cache, see ``CallHost.trusted``).

    Returns:
        The :class:`CallHost` answering the guest, and the :class:`Limits` wasmtime enforces;
        both end at the same deadline: ``timeout_s`` after ``started``, or the policy's own
        ``deadline`` when sooner (an inner call ends by its outer call's).
    """
    deadline = started + policy.timeout_s
    if policy.deadline is not None:
        deadline = min(deadline, policy.deadline)
    fetch = (
        policy.fetch.handler(deadline=deadline, tool=policy.tool)
        if policy.fetch is not None
        else None
    )
    tools = (
        policy.tools.handler(deadline=deadline, caller=policy.tool)
        if policy.tools is not None
        else None
    )
    host = CallHost(
        fetch=fetch,
        storage=StorageHook(policy.storage, policy.namespace, policy.storage_quota),
        libraries=libraries,
        log_lines=policy.log_lines,
        log_bytes=policy.log_bytes,
        deadline=deadline,
        trusted=trusted,
        tools=tools,
    )
    limits = Limits(
        deadline=deadline, memory_bytes=policy.memory_bytes, output_bytes=policy.output_bytes
    )
    return host, limits
