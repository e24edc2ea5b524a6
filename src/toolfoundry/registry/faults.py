"""Crash injection for the reliability tests.

Set ``TOOLFOUNDRY_CRASH_AT`` to a point name and the process kills itself with SIGKILL when
it reaches that point, exactly as ``kill -9`` would: no cleanup, no rollback, no flush.
"""

from __future__ import annotations

import os
import signal

ENV = "TOOLFOUNDRY_CRASH_AT"
# The points create_tool passes, in order.
POINTS = (
    "after_forge",
    "after_tool_row",
    "after_version_insert",
    "after_pointer_move",
    "before_commit",
    "after_commit",
)


def crash_point(name: str) -> None:
    """Die here, hard, when the environment asks for it."""
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
