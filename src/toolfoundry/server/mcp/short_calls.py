"""Which tool calls the MCP server runs on its event loop, without a worker thread.

Handing a call to a worker thread and back costs the server ~0.1-0.2 ms of CPU (a queue, a
condition's wake-up, the GIL passed over, the loop's self-pipe): for a tool that answers in
half a millisecond, as much as a third of the call. A call runs on the loop only once its tool
has answered :data:`STREAK` calls in a row within :data:`SHORT_MS` each in this process; a call
that takes longer sends the tool back to the threads, and one past :data:`LONG_MS` keeps it
there for good, so no tool holds the loop (and every other client) for long more than once.
Meta-tools and a project's declared tools always run on threads.
"""

from __future__ import annotations

SHORT_MS = 10.0  # wall time, so a loaded machine's waits count too
LONG_MS = 100.0
STREAK = 8
KEPT = 4096  # tools remembered; past that the record starts afresh


class ShortCalls:
    """The recent durations of each tool's calls, as far as this decision needs them."""

    def __init__(self) -> None:
        self._streak: dict[str, int] = {}
        self._long: set[str] = set()

    def on_loop(self, name: str) -> bool:
        """Whether the next call of ``name`` may run on the event loop."""
        return self._streak.get(name, 0) >= STREAK

    def saw(self, name: str, duration_ms: float) -> None:
        """A call of ``name`` took ``duration_ms``."""
        if name in self._long:
            return
        if duration_ms > LONG_MS:
            self._long.add(name)
            self._streak.pop(name, None)
            return
        if len(self._streak) >= KEPT and name not in self._streak:
            self._streak.clear()
        short = duration_ms <= SHORT_MS
        self._streak[name] = min(self._streak.get(name, 0) + 1, STREAK) if short else 0
