"""``crux-devtools serve``: the web inspector (and MCP over HTTP at ``/mcp``), on 127.0.0.1."""

from __future__ import annotations

import click


@click.command("serve")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (keep it local: the inspector runs your code).")
@click.option("--port", type=click.IntRange(1, 65535), default=4400, show_default=True, help="Port; if busy, the next free one is used and printed.")
@click.option("--no-open", is_flag=True, help="Do not open a browser.")
def serve(directory: str, host: str, port: int, no_open: bool) -> None:
    """Web inspector for the project in DIRECTORY, live as you save."""
    from ..mcp_server.http import http_mcp
    from ..web.serve import serve as run_server

    run_server(directory, host=host, port=port, open_browser=not no_open, mcp=http_mcp)
