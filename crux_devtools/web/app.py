"""The web inspector's app factory: a thin FastAPI adapter over a project session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import jinja2
import jinja2.bccache
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from jinja2_fragments.fastapi import Jinja2Blocks
from starlette.routing import Route

from ..inspector.features.runs.costs import format_usd_column
from ..inspector.features.shown.count_labels import COUNT_LABELS
from ..inspector.api import SessionLike
from ..inspector.errors import further_fields
from ..inspector.session.head_watch import head_watcher
from ..inspector.features.shown.panels import Panel, web_panels
from ..review.render import plural
from .routes import (
    api as routes_api,
    cache as routes_cache,
    diff as routes_diff,
    events as routes_events,
    otel as routes_otel,
    pages as routes_pages,
    replay as routes_replay,
    run_live as routes_run_live,
    runs as routes_runs,
)
from . import rung_styles
from .display import finalize, url_quote
from .events import EventHub
from .paths import asset_dir
from .security import BodyLimitMiddleware, LocalOnlyMiddleware, SameOriginOnly, SecurityHeadersMiddleware, allowed_host_set
from .slow_clients import BodyDeadline
from .views.prompt import prompt_href
from .views.list import marked


def panel_template(panel: Panel) -> str:
    """The partial that renders a panel on the web page: ``templates/_panel_<key>.html``."""
    return f"_panel_{panel.key}.html"


class _CompiledTemplates(jinja2.BytecodeCache):
    """Compiled templates kept in this process, by name and source checksum, for every environment
    ``make_templates`` builds (all built alike): a second app in this process (each test builds its
    own) reads a template's code instead of compiling it again; an edited template has another
    checksum and is compiled anew."""

    def __init__(self) -> None:
        self._code: dict[tuple[str, str], Any] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        bucket.code = self._code.get((bucket.key, bucket.checksum))

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.code is not None:
            self._code[(bucket.key, bucket.checksum)] = bucket.code


_compiled_templates = _CompiledTemplates()


def make_templates() -> Jinja2Blocks:
    """Templates with autoescaping on for every file, whatever its extension."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(asset_dir("templates"))),
        bytecode_cache=_compiled_templates,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=finalize,  # report text may hold surrogates (non-UTF-8 file names): shown as U+FFFD
    )
    env.filters["urlencode"] = url_quote
    env.filters["marked"] = marked  # search words in <mark>, the rest escaped
    env.globals["plural"] = plural  # "1 request", "3 requests": the wording the CLI and the TUI use
    env.globals["usd_column"] = format_usd_column  # sums of money shown side by side: one precision
    env.globals["prompt_href"] = prompt_href  # every link to a prompt: ids with "/", "?", ".." round-trip
    env.globals["further_fields"] = further_fields  # a load error's fields beyond where, what and message
    env.globals["web_panels"] = web_panels  # the prompt page's panels, in the registry's order
    env.globals["panel_template"] = panel_template
    env.globals["counts"] = COUNT_LABELS  # what each token figure of a contributor counts (inspector/features/shown/count_labels.py)
    rung_styles.register(env.globals)  # the words for a rung or a rejection reason (core/plan/rungs.py)
    return Jinja2Blocks(env=env)


def create_app(
    session: SessionLike,
    *,
    bound_host: str | None = None,
    allowed_hosts: Iterable[str] = (),
    manage_session: bool = True,
    mcp: Callable[[SessionLike], Any] | None = None,
) -> FastAPI:
    """Build the app. With ``manage_session`` the app starts the session before it answers anything
    (so the first page shows the first report) and stops it on shutdown. ``mcp(session)``, when given
    and not None, answers MCP at ``/mcp`` (an ASGI ``app`` and its ``running()`` lifespan), under the
    same Host checks and with no foreign Origin on any method."""
    hub = EventHub()
    hosts = allowed_host_set(bound_host, allowed_hosts)
    endpoint = mcp(session) if mcp is not None else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if manage_session:
            await session.start()
        hub.attach(session)
        # a commit moves HEAD without a save: the list's change marks are fetched again ("head")
        stop_head = head_watcher(session).subscribe(hub.head_moved) if getattr(session, "root", None) is not None else None
        try:
            async with AsyncExitStack() as running:
                if endpoint is not None:
                    await running.enter_async_context(endpoint.running())
                yield
        finally:
            if stop_head is not None:
                stop_head()
            hub.detach()
            if manage_session:
                await session.stop()

    app = FastAPI(title="crux-devtools inspector", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.session = session
    app.state.hub = hub
    app.state.mcp = endpoint is not None
    app.state.templates = make_templates()
    app.mount("/static", StaticFiles(directory=str(asset_dir("static"))), name="static")
    app.include_router(routes_pages.router)
    app.include_router(routes_api.router)
    app.include_router(routes_events.router)
    app.add_middleware(BodyDeadline)  # a request body that never finishes gets 408, not a hung route
    app.include_router(routes_runs.router)
    app.include_router(routes_run_live.router)  # /runs/{id}/live: a run's streaming step while it is recorded
    app.include_router(routes_diff.router)
    app.include_router(routes_replay.router)
    app.include_router(routes_cache.router)  # GET /prompt/cache: the Cache panel, fetched by the page
    app.include_router(rung_styles.router)  # /rungs.css: each rung's colour, from the vocabulary
    app.include_router(routes_otel.router)  # POST /v1/traces: OpenTelemetry spans in
    if endpoint is not None:  # MCP over streamable HTTP: the agent's view of the same session
        app.router.routes.append(Route("/mcp", SameOriginOnly(endpoint.app, hosts), methods=["GET", "POST", "DELETE"], include_in_schema=False))
    app.add_middleware(BodyLimitMiddleware)  # a body over 1 MB gets 413 before it is read
    app.state.allowed_hosts = hosts  # routes that need an Origin check it too
    app.add_middleware(LocalOnlyMiddleware, allowed_hosts=hosts)
    app.add_middleware(SecurityHeadersMiddleware)  # outermost: on every response, refusals included
    return app
