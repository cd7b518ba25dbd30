"""``crux-devtools serve``: run the web inspector for one project folder on a local port."""

from __future__ import annotations

import errno
import socket
import threading
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import uvicorn

from .paths import vendor_missing, vendor_missing_message
from .slow_clients import RequestHeadDeadline

PORT_ATTEMPTS = 20


@dataclass(frozen=True, slots=True)
class Binding:
    """Where the server listens; ``moved_from`` is the requested port when it was busy."""

    host: str
    port: int
    moved_from: int | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


def port_is_free(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        # as uvicorn binds: a port whose last connections are in TIME_WAIT (a restarted serve) is free
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}. Check --host.") from exc
    return True


def choose_binding(host: str, port: int) -> Binding:
    """The requested port, or the next free one within ``PORT_ATTEMPTS`` (said so by the caller)."""
    for candidate in range(port, port + PORT_ATTEMPTS):
        if candidate <= 65535 and port_is_free(host, candidate):
            return Binding(host, candidate, None if candidate == port else port)
    raise click.ClickException(
        f"ports {port}-{port + PORT_ATTEMPTS - 1} on {host} are all in use. Stop the other server or pass --port with a free port."
    )


def serve(directory: str | Path, *, host: str = "127.0.0.1", port: int = 4400, open_browser: bool = True, mcp: Any = None) -> None:
    """Load the project, then serve the inspector until Ctrl-C; prints the URL (and a moved port).
    ``mcp``: ``create_app``'s factory of the ``/mcp`` endpoint (None: no MCP)."""
    from ..inspector.session.service import ProjectSession
    from .app import create_app

    root = Path(directory)
    if not root.is_dir():
        raise click.ClickException(f"project folder {str(root)!r} does not exist or is not a folder")
    missing = vendor_missing()
    if missing:
        raise click.ClickException(vendor_missing_message(missing))
    binding = choose_binding(host, port)
    session = ProjectSession(root)
    app = create_app(session, bound_host=host, mcp=mcp)
    if binding.moved_from is not None:
        click.echo(f"Port {binding.moved_from} is busy; using {binding.port} instead.")
    click.echo(f"crux-devtools inspector for {session.root}")
    click.echo(f"Serving at {binding.url}  (Ctrl-C to stop)")
    if app.state.mcp:
        click.echo(f"MCP (streamable HTTP) at {binding.url}mcp")
    server = InspectorServer(server_config(app, binding))
    if open_browser and not can_open_browser():
        click.echo("No graphical display here: open the URL above in your browser (or pass --no-open).")
        open_browser = False
    if open_browser:
        threading.Thread(target=_open_when_started, args=(server, binding.url), daemon=True).start()
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it handled: stopping is the normal end
        pass
    click.echo("Stopped.")


def server_config(app: Any, binding: Binding) -> uvicorn.Config:
    """uvicorn's settings for the inspector: quiet, a short graceful stop, and deadlines for clients
    that never finish a request (see ``slow_clients``)."""
    return uvicorn.Config(
        app,
        host=binding.host,
        port=binding.port,
        log_level="warning",
        timeout_graceful_shutdown=5,
        timeout_keep_alive=5,
        http=RequestHeadDeadline,
    )


class InspectorServer(uvicorn.Server):
    """uvicorn, ending every ``/events`` stream as shutdown begins.

    uvicorn waits for open responses to finish before it runs the app's shutdown, and an event
    stream never finishes by itself: the hub's streams are told to end first, so Ctrl-C closes each
    open page's stream cleanly instead of cutting it when the graceful timeout runs out.
    """

    async def shutdown(self, sockets: Any = None) -> None:
        hub = getattr(getattr(self.config.app, "state", None), "hub", None)
        if hub is not None:
            hub.detach()
        await super().shutdown(sockets=sockets)


def can_open_browser() -> bool:
    """Whether opening a browser can show a window: not in CI, and on Linux only with a display.

    On a headless machine Python's ``webbrowser`` may fall back to a text browser that takes over
    the terminal, so we do not try there.
    """
    import os
    import sys

    if os.environ.get("CI"):
        return False
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def _open_when_started(server: uvicorn.Server, url: str) -> None:
    """Open the browser once uvicorn accepts connections (after the project's first load)."""
    import time

    deadline = time.monotonic() + 120
    while not server.started and not server.should_exit and time.monotonic() < deadline:
        time.sleep(0.05)
    if server.started:
        webbrowser.open(url)
