"""A running foundry follows its toolfoundry.toml: what ``serve`` does when the file changes.

:class:`ConfigReloader` re-reads the file when its modification time or size changes (checked
every ``interval_s`` by :meth:`ConfigReloader.start`'s thread) or when asked (``serve`` asks on
SIGHUP), and hands the new configuration to :meth:`Foundry.reconfigure`: the next call, create
or approval uses it; a call already running finishes under the old one.

Hot: ``[policy]``, ``[fetch]``, ``[limits]`` (but the two below) and ``[provider]``. A restart
is needed for what was built once at start-up, and the old value is kept until then (the log
says so): ``[registry]`` (the database is open), ``[catalog]`` (the project's tools are
loaded), and ``[limits] python_total_mib`` / ``python_queue_s`` and ``[policy]
python_packages`` (the Python tier's worker pool is started with them), ``[serve]`` and
``[[upstream]]`` (the MCP server and the upstream connections are made at start). A file that
cannot be read or is invalid is reported and the previous configuration kept.
"""

from __future__ import annotations

import threading
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolfoundry.config import CONFIG_FILE, ConfigError, parse_config

if TYPE_CHECKING:
    from toolfoundry.foundry.facade import Foundry

# `section` (a whole table) or `section.key`: kept until a restart
RESTART_KEYS = (
    "registry",
    "catalog",
    "limits.python_total_mib",
    "limits.python_queue_s",
    "policy.python_packages",
    "serve",  # read when the MCP server is built
    "upstream",  # the upstream connections are made at start
)
INTERVAL_S = 1.0


@dataclass(frozen=True)
class Reload:
    """What one check found.

    Attributes:
        applied: the keys (``fetch.allow_http``) whose new values are in use now.
        restart: changed keys that keep their old value until the server restarts.
        error: why the file was not used (the previous configuration is kept), or None.
    """

    applied: tuple[str, ...] = ()
    restart: tuple[str, ...] = ()
    error: str | None = None

    @property
    def changed(self) -> bool:
        """Whether anything is worth reporting."""
        return bool(self.applied or self.restart or self.error)

    def lines(self, path: Path) -> list[str]:
        """What the log says, one line per fact."""
        out = []
        if self.error is not None:
            out.append(f"{path} not reloaded, keeping the previous configuration: {self.error}")
        if self.applied:
            out.append(f"{path} reloaded: {', '.join(self.applied)} in use now")
        if self.restart:
            out.append(
                f"{path}: {', '.join(self.restart)} changed; that takes a restart of serve "
                "(the old value stays in use until then)"
            )
        return out


def _flat(data: Mapping[str, Any]) -> dict[str, Any]:
    """``{"fetch": {"allow": [...]}}`` -> ``{"fetch.allow": [...]}`` (one level: the sections)."""
    out: dict[str, Any] = {}
    for section, table in data.items():
        if isinstance(table, Mapping):
            for key, value in table.items():
                out[f"{section}.{key}"] = value
        else:
            out[section] = table
    return out


def _needs_restart(key: str) -> bool:
    return any(key == k or key.startswith(f"{k}.") for k in RESTART_KEYS)


def _with_kept(new: dict[str, Any], old: dict[str, Any], kept: set[str]) -> dict[str, Any]:
    """``new`` with each key of ``kept`` set back to its ``old`` value (or absent again)."""
    merged = {k: dict(v) if isinstance(v, Mapping) else v for k, v in new.items()}
    for key in kept:
        section, _, name = key.partition(".")
        if not isinstance(new.get(section, old.get(section, {})), Mapping):
            # an array of tables ([[upstream]]) is kept whole
            if section in old:
                merged[section] = old[section]
            else:
                merged.pop(section, None)
            continue
        table = merged.setdefault(section, {})
        old_table = old.get(section, {})
        if name and name in old_table:
            table[name] = old_table[name]
        elif name:
            table.pop(name, None)
    return merged


class ConfigReloader:
    """Re-reads one configuration file into one foundry when it changes.

    Args:
        foundry: the foundry to reconfigure.
        path: the file (``serve --config``), or None for ``./toolfoundry.toml``; a file that
            does not exist yet is picked up when it appears (and its removal means defaults).
        report: called with each line worth logging.
    """

    def __init__(
        self,
        foundry: Foundry,
        path: str | Path | None,
        report: Callable[[str], None],
        *,
        interval_s: float = INTERVAL_S,
    ) -> None:
        self.foundry = foundry
        self.path = Path(path) if path is not None else Path.cwd() / CONFIG_FILE
        self._report = report
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen = self._stamp()
        try:  # the foundry read it a moment ago; what it holds is the baseline
            self._data = self._read()
        except ConfigError:
            self._data = {}

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _read(self) -> dict[str, Any]:
        try:
            return tomllib.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, tomllib.TOMLDecodeError, ValueError) as exc:
            raise ConfigError(f"not valid TOML: {exc}") from exc

    def check(self, *, force: bool = False) -> Reload:
        """Reload when the file changed since the last check (or always, with ``force``)."""
        with self._lock:
            stamp = self._stamp()
            if stamp == self._seen and not force:
                return Reload()
            self._seen = stamp
            try:
                data = self._read()
                old, new = _flat(self._data), _flat(data)
                changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
                restart = {k for k in changed if _needs_restart(k)}
                config = parse_config(_with_kept(data, self._data, restart), path=self.path)
            except ConfigError as exc:
                found = Reload(error=str(exc))
            else:
                applied = tuple(k for k in changed if k not in restart)
                if applied:
                    self.foundry.reconfigure(config)
                # the kept values stay the baseline: a restart key differs until a restart
                self._data = _with_kept(data, self._data, restart)
                found = Reload(applied, tuple(sorted(restart)))
        for line in found.lines(self.path):
            self._report(line)
        return found

    def request(self) -> None:
        """Ask the thread to reload now (safe from a signal handler)."""
        self._wake.set()

    def start(self) -> ConfigReloader:
        """Check in a daemon thread every ``interval_s``, and whenever :meth:`request` is called."""
        self._thread = threading.Thread(target=self._run, name="toolfoundry-config", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the thread (it is a daemon: a process may also just exit)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            forced = self._wake.wait(self._interval_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.check(force=forced)
            except Exception as exc:  # the server must keep serving whatever a reload does
                self._report(f"{self.path}: reload failed, configuration unchanged: {exc!r}")
