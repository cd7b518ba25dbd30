"""``GET /diff?base=REV``: what the working tree's edits do to every request, against a git revision.

The same review as ``crux-devtools diff`` (``crux_devtools.review``), live: the page refetches its
body on every report the session emits; the base revision is evaluated once per commit.
"""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from ..inspector.diff_live import LiveDiff
from ..review.view import review_view
from .routes_pages import render, wants_block
from .views import report_header, shown_report

router = APIRouter()


def live_diff(request: Request) -> LiveDiff:
    """The app's one ``LiveDiff`` (it caches each base revision's evaluation)."""
    state = request.app.state
    if getattr(state, "live_diff", None) is None:
        state.live_diff = LiveDiff(state.session)
    live: LiveDiff = state.live_diff
    return live


@router.get("/diff", response_class=HTMLResponse)
async def diff_page(request: Request, base: str = Query("HEAD", max_length=200)) -> Response:
    document = await live_diff(request).document(base.strip() or "HEAD")
    view = review_view(document)
    view.header = report_header(shown_report(request.app.state.session))
    return render(request, "changes.html", {"view": view, "base": base},
                  block="review" if wants_block(request) else None)


@router.get("/diff/summary", response_class=HTMLResponse)
async def diff_summary(request: Request, base: str = Query("HEAD", max_length=200)) -> Response:
    """The list header's line: how many prompts differ from the base (an htmx fragment, refetched on
    every report; empty outside a git work tree)."""
    view = review_view(await live_diff(request).document(base.strip() or "HEAD"))
    return render(request, "_diff_summary.html", {"view": view, "base": base})
