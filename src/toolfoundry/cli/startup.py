"""A command's start-up with the cyclic garbage collector paused (issue 15).

Importing the MCP SDK, SQLAlchemy and our modules, then building the meta-tools, creates some
170 000 container objects that live as long as the process. While the heap grows the
collector walks all of them again and again: for ``toolfoundry serve`` two full collections
and some 25 of the middle generation, about a fifth of its time to the ``initialize`` answer
(docs/benchmarks.md "Start-up"). During start-up nothing needs collecting; afterwards what it
built is frozen (``gc.freeze``: kept out of every later collection, as it is never garbage),
so the first requests do not pay for a full collection over it either. The cycles that were
already garbage then stay allocated: about 0.8 MB once per ``serve`` (of the ~50 MB its
start-up allocates; tracemalloc, before and after one full collection).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from toolfoundry.spec.collector import gc_paused


def setting_up() -> AbstractContextManager[None]:
    """Run the block with the collector paused, then freeze what exists and resume it.

    Nested, or when the caller already paused the collector, it leaves the collector alone.
    """
    return gc_paused(freeze=True)
