"""Run untrusted JavaScript tools: QuickJS-NG in WebAssembly, limits enforced by wasmtime.

    >>> run_js("export function handler(a) { return a.x + 1 }", {"x": 1}).value
    2

Nothing is ambient: a script reaches the world only through fetch, localStorage and crypto,
each answered (and checked) by the host according to the :class:`SandboxPolicy`.

The public names are the ones below (``__all__``); every other module of the package may
change. :func:`run_js` lives in ``sandbox/js/run.py`` and loads (with wasmtime) on first use.

One seam module per family, the Protocols that implementations plug into:

- ``js/engine.py``: the JavaScript engine (``Engine``, ``Limits``);
- ``host/protocols.py``: the host capabilities a guest reaches (fetch, storage);
- ``process/executor.py``: the Python tier's executors (``Executor``, ``ProcessLimits``).

Protocols elsewhere are private to their package (``host/fetch_session.SessionPolicy``,
``process/budget.Budgeter``): nothing outside it plugs into them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry.base.lazy import lazy_names
from toolfoundry.sandbox.policy import SandboxPolicy

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.sandbox.js.run import run_js

__all__ = ["SandboxPolicy", "run_js"]

_LAZY = {"run_js": "toolfoundry.sandbox.js.run"}
__getattr__ = lazy_names(__name__, _LAZY)
