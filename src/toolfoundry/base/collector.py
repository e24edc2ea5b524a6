"""Python's cyclic garbage collector paused around work that makes many objects and no garbage.

Two uses: building thousands of acyclic records at once (a listing, a catalogue: their young
objects would set off full collections, each walking every object the process holds plus the
records built so far, so ten times the rows cost ~40 times), and a command's start-up (the CLI
around a command's imports, ``serve`` around the SDK's import and its server's set-up): the
imports make some 170 000 long-lived objects that the collector walked in 2 full and ~25
middle collections before ``serve``'s first answer (docs/benchmarks.md "Start-up"). Start-up
then freezes what it built, so later collections skip it; the cycles already garbage then stay
allocated, about 0.8 MB once per ``serve`` (tracemalloc, before and after a full collection).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside; left alone when the collector is already paused.

    Args:
        freeze: afterwards, move everything that exists into the permanent generation
            (``gc.freeze``): what start-up built lives as long as the process, so later
            collections need not walk it. The few cycles already garbage stay allocated.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        gc.enable()
