"""What a command checks before it starts: the sandbox is usable, the address is free.

Each failure is one line with the fix (a ``click.ClickException``, exit 1), never a traceback
and never a server that starts and then fails every call.
"""

from __future__ import annotations

import errno
import socket

import click


def require_sandbox() -> None:
    """Stop the command when the sandbox's built files are missing or damaged.

    Raises:
        click.ClickException: what is wrong and the fix, in one line.
    """
    from toolfoundry.sandbox.js.installation import SandboxUnavailable, require

    try:
        require()
    except SandboxUnavailable as exc:
        raise click.ClickException(str(exc)) from None


def listen(host: str, port: int) -> socket.socket:
    """A socket bound and listening on ``host:port``, before anything is announced.

    Raises:
        click.ClickException: the address is taken, not local, or cannot be resolved.
    """
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise click.ClickException(f"cannot listen on {shown}: {exc.strerror}") from None
    sock = socket.socket(family, kind, proto)
    try:
        # as uvicorn does: a restarted server may reuse a port in TIME_WAIT (a port another
        # socket listens on still refuses the bind)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        hint = (
            " (another server uses it; pick another port)" if exc.errno == errno.EADDRINUSE else ""
        )
        raise click.ClickException(f"cannot listen on {shown}: {reason.lower()}{hint}") from None
    sock.set_inheritable(True)
    return sock
