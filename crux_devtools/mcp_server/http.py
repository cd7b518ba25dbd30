"""MCP over streamable HTTP for ``crux-devtools serve``: the same read tools at ``/mcp``.

``serve`` builds this only when the SDK is installed and hands it to the web app, which routes
``/mcp`` to ``app`` behind its own Host and Origin checks, and runs ``running()`` in its lifespan
(the SDK's session manager). The tools read the page's own session: no second load of the project.
No spending tool is offered over HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

MCP_PATH = "/mcp"


class HttpMcp:
    """The ASGI app answering MCP at ``/mcp`` for one session, and its lifespan."""

    def __init__(self, session: Any, *, timeout: float = 10.0) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
        from mcp.server.transport_security import TransportSecuritySettings

        from .server import build_server
        from .tools import ProjectTools

        self.tools = ProjectTools(session, timeout=timeout)
        self.server = build_server(self.tools, allow_spend=False)
        # Host and Origin are the web app's to check (its middleware and SameOriginOnly), with the
        # page's rules; the SDK's own copy of such a check is off so the two cannot disagree.
        self.server.streamable_http_app(
            streamable_http_path=MCP_PATH, transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        self.app = StreamableHTTPASGIApp(self.server.session_manager)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield


def http_mcp(session: Any) -> HttpMcp | None:
    """The ``/mcp`` endpoint for ``session``, or None when the MCP SDK is not installed."""
    try:
        import mcp.server  # noqa: F401
    except ImportError:
        return None
    return HttpMcp(session)
