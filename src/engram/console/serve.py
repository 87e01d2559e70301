"""Serving the console: a loopback socket, the printed URL, the server until Ctrl-C.

The socket is bound before anything is opened, so a port in use is said at once; the
project and the host profiles are opened once and closed when the server stops.
uvicorn's access log is off: the login URL carries the one-time secret.
"""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.errors import NotInitialized, UsageError

if TYPE_CHECKING:
    from engram.console.governed import GovernedView

__all__ = ["serve"]


def _server_class(on_started: Callable[[], None]) -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, stopped by Ctrl-C or SIGTERM as the console's own end: uvicorn
        raises the signal again once it has shut down, which would end the process before
        the console closes its stores and removes ``--open``'s file. ``on_started`` runs
        once it listens with its signal handlers in place (the URL is printed then, so a
        stop right after it is still a clean one)."""

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if not self.should_exit:  # it failed to start, and says why itself
                on_started()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {number: signal.signal(number, self.handle_exit) for number in handled}
            try:
                yield
            finally:
                for number, handler in original.items():
                    signal.signal(number, handler)

    return Server


def _bind(port: int) -> socket.socket:
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on accepted connections only then, and
    # without it every answer on a kept-alive connection waited 40 ms for an ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listener.bind(("127.0.0.1", port))
    except OSError as error:
        listener.close()
        raise UsageError(
            f"port {port} on 127.0.0.1 is in use: give another with --port, or leave it out"
            " for a free one"
        ) from error
    listener.listen(64)
    return listener


def _open_privately(url: str) -> Path:
    """Open ``url`` in the person's browser without putting the secret on a command line
    (any user of the machine can list those): the browser gets a file only this user can
    read that forwards to the URL; it is removed after a minute or when the console
    stops."""
    import html
    import os
    import tempfile
    import threading
    import webbrowser

    handle, name = tempfile.mkstemp(prefix="engram-console-", suffix=".html")  # 0600
    with os.fdopen(handle, "w", encoding="utf-8") as page:
        page.write(f'<!doctype html><meta http-equiv="refresh" content="0;url={html.escape(url)}">')
    forward = Path(name)
    webbrowser.open(forward.as_uri())
    remover = threading.Timer(60, lambda: forward.unlink(missing_ok=True))
    remover.daemon = True
    remover.start()
    return forward


def serve(
    start: Path,
    profiles: Sequence[Path],
    port: int,
    say: Callable[[str], None],
    open_browser: bool = False,
) -> None:
    """Serve the console for the project enclosing ``start`` and these host profiles."""
    import uvicorn

    from engram.compose import open_project
    from engram.console.app import Console, build_app
    from engram.console.governed import open_governed
    from engram.console.guard import Guard

    listener = _bind(port)
    guard = Guard(listener.getsockname()[1])
    try:
        project, no_project = open_project(start, watch=True), ""
    except NotInitialized as error:
        project, no_project = None, error.detail
    governed: list[GovernedView] = []
    opened: Path | None = None
    try:
        for profile in profiles:  # one by one: those opened are closed if a later one fails
            governed.append(open_governed(profile))
        if project is None and not governed:
            raise UsageError(
                f"nothing to review: {no_project}, or give a host profile with --host-profile"
            )
        console = Console(guard, project, governed, no_project)
        if open_browser:
            opened = _open_privately(guard.login_url)

        def started() -> None:
            say(f"engram console: {guard.login_url}")
            say("(the link works once; stop the console with Ctrl-C)")

        config = uvicorn.Config(
            build_app(console), log_level="warning", access_log=False, lifespan="off"
        )
        _server_class(started)(config).run(sockets=[listener])
    finally:
        if opened is not None:
            opened.unlink(missing_ok=True)
        listener.close()
        for view in governed:
            view.close()
        if project is not None:
            project.close()
