"""The host side of one call: answers the guest's ``host_call(op, json)`` requests.

Every op validates its input here; a script that calls the raw hook with crafted input gets an
error answer, never more authority. Handlers never raise into the guest. JSON requests pass the
JSON gate (depth, numbers, valid Unicode: a storage key or fetch URL with a lone surrogate is
refused, located) and answers leave through its encoder; log lines are text for people, so a
lone surrogate in one is kept as its visible escape.

The ``tool`` op is code mode's ``tools.NAME(args)``: the request is checked here (its shape,
and the JSON gate with one level for the wrapper), then handed to the call's
:class:`~toolfoundry.sandbox.host.protocols.ToolsHandler` on a native stack of its own
(``nesting.py``: the callee runs in another store below this one). Once the call has returned
(:meth:`CallHost.close`), every later ``tool`` request is refused; between the moment its
answer is decided and then, the prelude refuses them itself (47-tools.js), without a crossing.
"""

from __future__ import annotations

import time
from typing import Any

from toolfoundry.base.json_gate import (
    JSON_LIMITS,
    InvalidJson,
    decode,
    encode,
    encode_checked,
    well_formed,
)
from toolfoundry.sandbox.host import crypto
from toolfoundry.sandbox.host.protocols import FetchHandler, ToolRequest, ToolsHandler
from toolfoundry.sandbox.host.storage import StorageHook
from toolfoundry.sandbox.js.modules import ImportRefused, LibraryCatalog
from toolfoundry.sandbox.js.nesting import run_nested
from toolfoundry.sandbox.js.surface import global_instead
from toolfoundry.spec import CallResult

LOG_LEVELS = {"log", "info", "debug", "warn", "error"}
# a tool request wraps the arguments in one object: {"name", "args", "version"}
_TOOL_REQUEST_LIMITS = JSON_LIMITS.enclosing(1)


class CallHost:
    """Host capabilities for one call: logs, fetch, storage, crypto, library imports, tools."""

    def __init__(
        self,
        *,
        fetch: FetchHandler | None,
        storage: StorageHook,
        libraries: LibraryCatalog,
        log_lines: int,
        log_bytes: int,
        deadline: float,
        trusted: bool = False,
        tools: ToolsHandler | None = None,
    ) -> None:
        self.fetch = fetch
        self.tools = tools
        # Only a call the host runs itself, with no tool code in it, may hand back library
        # bytecode for the process-wide cache: bytecode offered by a call that runs a tool
        # could have been forged by that tool and would then run inside every later tool.
        self.trusted = trusted
        self.storage = storage
        self.libraries = libraries
        self.log_lines = log_lines
        self.log_bytes = log_bytes
        self.deadline = deadline
        self.logs: list[str] = []
        self._log_used = 0
        self._logs_full = False
        self.fetch_count = 0
        self._sources_served: set[str] = set()
        # The error kinds this host itself answered during the call (a refused fetch, a spent
        # budget): the only kinds besides the engine's own facts a failed call may end with.
        self.refused_kinds: set[str] = set()
        # The kinds inner tool calls failed with: an uncaught ToolError ends the call with one.
        self.tool_kinds: set[str] = set()
        self.tool_count = 0
        self._answered = False

    def answer(self, op: str, payload: bytes) -> bytes:
        """Answer one request: JSON in and out, except for the raw ops answered first (the
        module loader's, logs, Intl parts, random bytes, and crypto's binary digest and HMAC)."""
        if op == "import":
            return self._import(payload.decode("utf-8", "replace"))
        if op == "bytecode":
            self._bytecode(payload)
            return b""
        if op == "log":  # hot and simple: "level\ntext" -> b"1" while there is room
            level, _, text = payload.decode("utf-8", "surrogatepass").partition("\n")
            return b"1" if self._log([level, text]) else b"0"
        if op == "intl":  # a part of Intl by name -> its text ("" when it is not bundled)
            return (self.libraries.intl(payload.decode("utf-8", "replace")) or "").encode()
        if op == "random":  # "count" -> the bytes
            count = int(payload) if payload.isdigit() and len(payload) < 8 else -1
            return crypto.random_bytes(count)
        if op == "digest":  # bytes as bytes: header, NUL, fields -> binary (host/crypto.py)
            return crypto.digest(payload)
        if op == "hmac":
            return crypto.hmac_sign_or_verify(payload)
        if op == "tool":
            return self._tool_answer(payload)
        try:
            data = decode(payload)
        except InvalidJson as exc:
            # a fetch the host will not read is one it will not make: a denied capability
            kind = "capability_denied" if op == "fetch" else "runtime_error"
            message = f"{op}: malformed host request: {exc}"
            answer: Any = {"error": {"kind": kind, "message": message}}
        else:
            answer = self._dispatch(op, data)
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            self.refused_kinds.add(str(answer["error"].get("kind")))
        try:
            return encode(answer).encode("utf-8")
        except InvalidJson as exc:  # a handler's answer that is not JSON: the script sees why
            failed = {"error": {"kind": "runtime_error", "message": f"{op}: {exc}"}}
            return encode(failed).encode("utf-8")

    def _import(self, specifier: str) -> bytes:
        """``!message`` when refused, ``B`` + cached bytecode, or ``S`` + source."""
        try:
            source = self.libraries.source(specifier)
        except ImportRefused as exc:  # `crypto`, `node:url`: name the global that does it
            instead = global_instead(specifier)
            return ("!" + (exc.because(instead) if instead else str(exc))).encode()
        code = self.libraries.bytecode(specifier)
        if code is not None:
            return b"B" + code
        self._sources_served.add(specifier)
        return b"S" + source.encode("utf-8")

    def _bytecode(self, payload: bytes) -> None:
        # Kept only from a trusted call, and only for a source it was just given.
        name, sep, code = payload.partition(b"\0")
        specifier = name.decode("utf-8", "replace")
        if self.trusted and sep and specifier in self._sources_served:
            self.libraries.keep_bytecode(specifier, code)

    def _dispatch(self, op: str, data: Any) -> Any:
        if op == "log":
            return self._log(data)
        if op == "storage":
            return self.storage.handle(data)
        if op == "fetch":
            return self._fetch(data)
        return {"error": {"kind": "runtime_error", "message": f"unknown host operation {op!r}"}}

    def close(self) -> None:
        """The call has ended: the tools handler refuses everything from now on."""
        self._answered = True
        if self.tools is not None:
            self.tools.close()

    def _tool_answer(self, payload: bytes) -> bytes:
        name, answer = self._tool(payload)
        if isinstance(answer, str):  # the value's JSON text, written by the gate
            return ('{"value":' + answer + "}").encode("utf-8")
        try:
            return encode(answer).encode("utf-8")
        except InvalidJson as exc:  # an answer the gate refuses never reaches the script
            refused = self._tool_refused(name, "invalid_output", f"the answer is refused: {exc}")
            return encode(refused).encode("utf-8")

    def _tool(self, payload: bytes) -> tuple[str | None, dict[str, Any] | str]:
        """One ``tools`` call: (the tool's name, the JSON text of its value, or ``{"error":
        {kind, message, tool}}``)."""
        try:
            data = decode(payload, _TOOL_REQUEST_LIMITS)
        except InvalidJson as exc:
            message = f"the request is refused: {exc}"
            return None, self._tool_refused(None, "invalid_arguments", message)
        request = _tool_request(data)
        if isinstance(request, str):
            name = data.get("name") if isinstance(data, dict) else None
            name = name if isinstance(name, str) else None
            return name, self._tool_refused(name, "invalid_arguments", request)
        name = request.name
        if self.tools is None:
            message = "tools are not available here: this call runs without a tool registry"
            return name, self._tool_refused(name, "capability_denied", message)
        if self._answered:
            message = "the call has already answered: an inner call after that is refused"
            return name, self._tool_refused(name, "runtime_error", message)
        if time.monotonic() >= self.deadline:
            return name, self._tool_refused(name, "timeout", "the time budget is spent")
        self.tool_count += 1
        tools = self.tools
        try:
            result = run_nested(lambda: tools.call(request))
        except Exception as exc:  # a handler must not raise; if one does, the script sees it
            result = CallResult.failure("runtime_error", f"the inner call failed: {exc}")
        if result.error is not None:
            return name, self._tool_refused(name, result.error.kind.value, result.error.message)
        try:  # the value crosses the gate like any result (depth, numbers, Unicode), once
            return name, encode_checked(result.value)
        except InvalidJson as exc:
            return name, self._tool_refused(name, "invalid_output", f"the answer is refused: {exc}")

    def _tool_refused(self, name: str | None, kind: str, message: str) -> dict[str, Any]:
        self.tool_kinds.add(kind)
        where = f"tools.{name}: " if name is not None else "tools: "
        return {"error": {"kind": kind, "message": where + message, "tool": name}}

    def _log(self, data: Any) -> bool:
        if self._logs_full:
            return False
        if (
            not isinstance(data, list)
            or len(data) != 2
            or data[0] not in LOG_LEVELS
            or not isinstance(data[1], str)
        ):
            return True
        level, text = data
        text = well_formed(text)  # kept as shown: a lone surrogate becomes its escape
        line = text if level in ("log", "info", "debug") else f"[{level}] {text}"
        room = self.log_bytes - self._log_used
        if len(self.logs) >= self.log_lines or room <= 0:
            self._close_logs()
            return False
        if len(line) > room:
            line = line[:room]
        self.logs.append(line)
        self._log_used += len(line)
        return True

    def _close_logs(self) -> None:
        self._logs_full = True
        self.logs.append(f"[logs truncated: limit {self.log_lines} lines / {self.log_bytes} bytes]")

    def _fetch(self, data: Any) -> dict[str, Any]:
        if self.fetch is None:
            return {
                "error": {
                    "kind": "capability_denied",
                    "message": "fetch is not allowed: this tool has no network capability",
                }
            }
        if not isinstance(data, dict):
            return {"error": {"kind": "runtime_error", "message": "fetch: malformed request"}}
        if time.monotonic() >= self.deadline:
            return {"error": {"kind": "timeout", "message": "fetch: the time budget is spent"}}
        self.fetch_count += 1
        try:
            return self.fetch.handle(data)
        except Exception as exc:  # a handler must not raise; if one does, the script sees it
            return {"error": {"kind": "runtime_error", "message": f"fetch failed: {exc}"}}


def _tool_request(data: Any) -> ToolRequest | str:
    """The request a script's ``tools`` call sent, or why it is malformed."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return "a tool call needs the tool's name as a string"
    args = data.get("args", {})
    if not isinstance(args, dict):
        return f"the arguments must be a JSON object, got {type(args).__name__}"
    version = data.get("version")
    if version is not None and (
        isinstance(version, bool) or not isinstance(version, int) or version < 1
    ):
        return "version must be a positive integer"
    return ToolRequest(data["name"], args, version)
