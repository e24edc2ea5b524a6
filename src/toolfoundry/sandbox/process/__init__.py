"""The second tier: Python tools in bubblewrap jails, in-process or behind an HTTP service.

    from toolfoundry.sandbox.process import WarmPool, ProcessLimits
    with WarmPool(size=2) as pool:
        pool.run("def handler(a):\\n    return a['x'] + 1", {"x": 1}, ProcessLimits()).value  # 2

Every executor implements :class:`Executor`, the tier's seam (``executor.py``, with
:class:`ProcessLimits`); see README.md in this folder for the boundary.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from toolfoundry.base.lazy import lazy_names
from toolfoundry.sandbox.process.admission import Admission
from toolfoundry.sandbox.process.executor import Executor, ProcessLimits

if TYPE_CHECKING:  # the jail (subprocess, select, ...) loads when one is probed or started
    from toolfoundry.sandbox.process.jail import JailConfig, JailUnavailable, find_bwrap, probe

_LAZY = {
    "JailConfig": "toolfoundry.sandbox.process.jail",
    "JailUnavailable": "toolfoundry.sandbox.process.jail",
    "find_bwrap": "toolfoundry.sandbox.process.jail",
    "probe": "toolfoundry.sandbox.process.jail",
}
__getattr__ = lazy_names(__name__, _LAZY)

EXECUTOR_URL_ENV = "TOOLFOUNDRY_EXECUTOR"
EXECUTOR_TOKEN_ENV = "TOOLFOUNDRY_EXECUTOR_TOKEN"

__all__ = [
    "EXECUTOR_TOKEN_ENV",
    "EXECUTOR_URL_ENV",
    "Admission",
    "Executor",
    "JailConfig",
    "JailUnavailable",
    "ProcessLimits",
    "default_executor",
    "find_bwrap",
    "probe",
]


def default_executor(
    packages: tuple[str, ...] = (), *, pool_size: int = 2, admission: Admission | None = None
) -> Executor | None:
    """The executor a foundry uses when given none.

    ``TOOLFOUNDRY_EXECUTOR`` (a URL of ``toolfoundry executor serve``, with the token in
    ``TOOLFOUNDRY_EXECUTOR_TOKEN``) selects the remote service (which admits calls by its
    own budget); otherwise a warm pool of local bubblewrap jails whose concurrent calls share
    ``admission`` (default: ``[limits] python_total_mib``'s default); None when bwrap is
    missing or cannot start a jail here (:func:`~toolfoundry.sandbox.process.jail.probe`).
    """
    from toolfoundry.sandbox.process.jail import JailUnavailable, find_bwrap, probe

    url = os.environ.get(EXECUTOR_URL_ENV)
    if url:
        from toolfoundry.sandbox.process.remote import HttpExecutor

        return HttpExecutor(url, os.environ.get(EXECUTOR_TOKEN_ENV, ""))
    if find_bwrap() is None or probe() is not None:
        return None
    from toolfoundry.sandbox.process.pool import WarmPool

    try:
        return WarmPool(pool_size, packages=packages, admission=admission)
    except JailUnavailable:
        return None
