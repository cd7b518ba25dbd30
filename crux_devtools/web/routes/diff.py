"""``/diff``: what the working tree's edits do to every request, against a git revision.

The same review as ``crux-devtools diff`` (``crux_devtools.review``), live: the page refetches its
body on every report the session emits; the base revision is evaluated once per commit.

Evaluating a revision runs that revision's code, so it is the user's decision: ``GET /diff``
evaluates ``HEAD`` only (the code the working tree grew from). Another base is evaluated on a
``POST`` from the inspector's own page (its ``Origin`` must name this server); a link to
``/diff?base=BRANCH`` shows a button that asks first (a base already evaluated is shown: no code
runs for it). A revision git cannot be given (a control character, an option) is a 400.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ...inspector.features.diff.live import LiveDiff
from ...review.revisions import RevisionError, check_revision
from ...review.view import review_view
from .pages import render, url_encoded_form, wants_block
from ..security import origin_matches_host
from ..views.prompt import report_header, shown_report

router = APIRouter()
TRUSTED_BASE = "HEAD"  # evaluated on a plain GET


def live_diff(request: Request) -> LiveDiff:
    """The app's one ``LiveDiff`` (it caches the newest base revisions' evaluations)."""
    state = request.app.state
    if getattr(state, "live_diff", None) is None:
        state.live_diff = LiveDiff(state.session)
    live: LiveDiff = state.live_diff
    return live


def _from_own_page(request: Request) -> bool:
    """A POST whose ``Origin`` names this server (browsers send it on every POST from a page)."""
    origin = request.headers.get("origin")
    allowed = getattr(request.app.state, "allowed_hosts", None)
    if origin is None or allowed is None:
        return False
    return origin_matches_host(origin, request.headers.get("host", ""), allowed)


async def _page(request: Request, base: str, *, confirmed: bool) -> Response:
    base = base.strip() or TRUSTED_BASE
    live = live_diff(request)
    context: dict[str, Any] = {"base": base, "confirm": False}
    try:
        check_revision(base)
    except RevisionError as exc:
        context["view"] = review_view({"error": str(exc), "base": {"rev": base, "sha": None}})
        context["view"].header = report_header(shown_report(request.app.state.session))
        return render(request, "changes.html", context, status=400)
    if base != TRUSTED_BASE and not confirmed and not await live.evaluated(base) and await live.sha(base) is not None:
        context["confirm"] = True  # (an unknown revision runs nothing: its error is shown at once)
        context["view"] = review_view({"error": f"comparing with {base} runs the code of {base}: confirm below",
                                       "base": {"rev": base, "sha": None}})
    else:
        context["view"] = review_view(await live.document(base))
    context["view"].header = report_header(shown_report(request.app.state.session))
    return render(request, "changes.html", context, block="review" if wants_block(request) else None)


@router.get("/diff", response_class=HTMLResponse)
async def diff_page(request: Request, base: str = Query(TRUSTED_BASE, max_length=200)) -> Response:
    return await _page(request, base, confirmed=False)


@router.post("/diff", response_class=HTMLResponse)
async def diff_confirmed(request: Request) -> Response:
    """A base chosen on the page itself: evaluated (its code runs) when the request comes from it."""
    base = (await url_encoded_form(request)).get("base", TRUSTED_BASE)[:200]
    return await _page(request, base, confirmed=_from_own_page(request))


@router.get("/diff.json")
async def diff_json(request: Request, base: str = Query(TRUSTED_BASE, max_length=200)) -> Response:
    """The review document itself, as ``crux-devtools diff --format json`` prints it (timing aside):
    ``HEAD``, or a base the page already evaluated (409 otherwise: confirm it on ``/diff``)."""
    base = base.strip() or TRUSTED_BASE
    try:
        check_revision(base)
    except RevisionError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    live = live_diff(request)
    if base != TRUSTED_BASE and not await live.evaluated(base):
        return JSONResponse({"error": f"comparing with {base} runs its code: confirm it on /diff first"}, status_code=409)
    document = await live.document(base)
    return JSONResponse(document, status_code=200 if "error" not in document else 422)


@router.get("/diff/summary", response_class=HTMLResponse)
async def diff_summary(request: Request, base: str = Query(TRUSTED_BASE, max_length=200)) -> Response:
    """The list header's line: how many prompts differ from the base (an htmx fragment, refetched on
    every report and when HEAD moves; empty outside a git work tree or for a base not yet chosen)."""
    base = base.strip() or TRUSTED_BASE
    try:
        check_revision(base)
    except RevisionError as exc:
        return render(request, "_diff_summary.html", {"view": review_view({"error": str(exc), "base": {"rev": base}}), "base": base}, status=400)
    live = live_diff(request)
    if base != TRUSTED_BASE and not await live.evaluated(base):
        return Response("", media_type="text/html")
    view = review_view(await live.document(base))
    return render(request, "_diff_summary.html", {"view": view, "base": base})
