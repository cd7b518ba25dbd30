"""Host and Origin checks: the inspector runs user code, so only the local browser may talk to it.

A DNS-rebinding page reaches us with a foreign ``Host``; a cross-site form or fetch carries a foreign
``Origin``. Both are refused before any route runs.

One request is let through with a foreign ``Host``: an OpenTelemetry export (``POST /v1/traces``)
while ``CRUX_DEVTOOLS_OTLP_TOKEN`` is set, since a remote exporter names the server by the address it
reaches it at. Its route then takes it only with that token as a Bearer token. The pages, ``/api``
and every other path still refuse a foreign ``Host``, token or not.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TOKEN_ENV = "CRUX_DEVTOOLS_OTLP_TOKEN"
OTLP_PATH = "/v1/traces"


def otlp_token() -> str:
    """The token remote OpenTelemetry exporters must present (``""``: only this machine may send)."""
    return os.environ.get(TOKEN_ENV, "").strip()


def remote_ingest(scope: dict[str, Any]) -> bool:
    """Whether the request is an OpenTelemetry export the token opens to other machines (its route
    checks the token): ``POST /v1/traces`` while ``CRUX_DEVTOOLS_OTLP_TOKEN`` is set."""
    return scope.get("path") == OTLP_PATH and str(scope.get("method", "")).upper() == "POST" and bool(otlp_token())


def host_name(value: str) -> str:
    """The host part of a ``Host`` header or netloc, lower-cased, without port or IPv6 brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


def allowed_host_set(bound_host: str | None = None, extra: Iterable[str] = ()) -> frozenset[str]:
    """Local names always, plus the host the server is bound to (unless it is a wildcard)."""
    hosts = set(LOCAL_HOSTS)
    for name in (bound_host, *extra):
        if name and name not in ("0.0.0.0", "::"):
            hosts.add(host_name(name))
    return frozenset(hosts)


class LocalOnlyMiddleware:
    """Answer 400 to a foreign ``Host`` and 403 to a state-changing request from a foreign origin."""

    def __init__(self, app: Any, allowed_hosts: frozenset[str]) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if host_name(host) not in self.allowed_hosts and not remote_ingest(scope):
            await _plain(send, 400, f"Host {host!r} is not allowed: open the inspector at http://127.0.0.1 or http://localhost.")
            return
        method = scope.get("method", "GET").upper()
        if method in SAFE_METHODS and cross_site_subresource(headers):
            await _plain(send, 403, "Cross-site request refused: another site's page may link to the inspector, not embed or fetch it.")
            return
        if method not in SAFE_METHODS and not self.same_origin(headers):
            await _plain(send, 403, "Cross-origin request refused: state-changing requests must come from the inspector's own page.")
            return
        await self.app(scope, receive, send)

    def same_origin(self, headers: dict[str, str]) -> bool:
        """True when the request names no foreign origin (browsers always send one on POST)."""
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return False
        origin = headers.get("origin")
        if origin is None:
            return True  # not a browser page (curl, tests); Host was already checked
        if origin == "null":
            return False
        return origin_matches_host(origin, headers.get("host", ""), self.allowed_hosts)


DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_matches_host(origin: str, host: str, allowed_hosts: frozenset[str]) -> bool:
    """Whether an ``Origin`` names a local page on the same port as the ``Host`` the request came to.

    The origin is parsed as a URL (``http://localhost:80@evil.example`` is the host ``evil.example``
    with the user ``localhost``); an origin with user info, a path or a bad port is refused."""
    try:
        parts = urlsplit(origin)
        origin_port = parts.port or DEFAULT_PORTS.get(parts.scheme)
        host_port = urlsplit(f"//{host}").port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port that is not a number, or out of range
        return False
    if parts.scheme not in DEFAULT_PORTS or "@" in parts.netloc or parts.path not in ("", "/") or parts.query or parts.fragment:
        return False
    return parts.hostname is not None and parts.hostname in allowed_hosts and origin_port == host_port


MAX_BODY_BYTES = 1024 * 1024
# An OpenTelemetry export (POST /v1/traces) may be a large batch: its route takes up to this many bytes
# (after decompression too) and answers OTLP's own 413 past it.
OTLP_MAX_BODY_BYTES = 32 * 1024 * 1024
WIDER_BODY_LIMITS = {"/v1/traces": (OTLP_MAX_BODY_BYTES, "an exporter should send smaller batches")}


class BodyLimitMiddleware:
    """Answer ``413`` to a request body over ``limit`` bytes (``wider[path]``: the limit and a hint for
    the paths it names), without reading more than that.

    A declared ``Content-Length`` over the limit is refused before any byte of the body is read; a
    chunked body is counted as it arrives and refused once it passes the limit."""

    def __init__(self, app: Any, limit: int = MAX_BODY_BYTES, wider: dict[str, tuple[int, str]] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.wider = WIDER_BODY_LIMITS if wider is None else wider

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, hint = self.wider.get(scope.get("path", ""), (self.limit, ""))
        too_large = f"request body over {limit:,} bytes refused" + (f": {hint}" if hint else "")
        for name, value in scope.get("headers", []):
            if name.lower() == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _plain(send, 400, "bad Content-Length header")
                    return
                if declared > limit:
                    await _plain(send, 413, too_large, close=True)
                    return
        received = 0

        async def receive_within_limit() -> dict[str, Any]:
            nonlocal received
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413, too_large, {"Connection": "close"})
            return message

        await self.app(scope, receive_within_limit, send)


# Only the page's own files: no inline script or style, no eval, nothing from elsewhere, and no
# framing by any page (clickjacking the Run button). Browsers ignore frame-ancestors in a <meta>.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),  # for browsers without frame-ancestors
    (b"x-content-type-options", b"nosniff"),
)


class SecurityHeadersMiddleware:
    """Add ``SECURITY_HEADERS`` to every HTTP response: pages, JSON, static files, errors."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in SECURITY_HEADERS if name not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def cross_site_subresource(headers: dict[str, str]) -> bool:
    """A foreign page fetching or embedding us (evaluating user code with its input); a link is fine."""
    return headers.get("sec-fetch-site") == "cross-site" and headers.get("sec-fetch-mode", "navigate") != "navigate"


async def _plain(send: Any, status: int, text: str, *, close: bool = False) -> None:
    body = text.encode("utf-8")
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    if close:  # the client may still be sending a body we will not read
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class SameOriginOnly:
    """Every request to the wrapped app, whatever its method, must name no foreign origin (the rule
    ``LocalOnlyMiddleware`` applies to state-changing requests): for an endpoint whose every call
    runs the project's code, such as MCP at ``/mcp``. A refusal is 403."""

    def __init__(self, app: Any, allowed_hosts: frozenset[str]) -> None:
        self.app = app
        self.local = LocalOnlyMiddleware(app, allowed_hosts)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if not self.local.same_origin(headers):
                await _plain(send, 403, "Cross-origin request refused: only a local client may talk to /mcp.")
                return
        await self.app(scope, receive, send)
