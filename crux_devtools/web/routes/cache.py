"""``GET /prompt/cache?id=ID``: the Cache panel of a prompt, as an htmx fragment.

Each example is planned a second time in the session's worker (``inspector/features/shown/cache_view.py``, the
same advice as ``crux-devtools cache``; no model is called), so the panel is fetched once the page
is shown rather than with every report.
"""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from ...inspector.features.shown.cache_view import bar, target_advice
from .pages import render
from ..views.prompt import lookup_prompt, shown_report

router = APIRouter()


@router.get("/prompt/cache", response_class=HTMLResponse)
async def cache_panel(request: Request, id: str = Query(..., max_length=1000)) -> Response:
    session = request.app.state.session
    prompt = lookup_prompt(shown_report(session), id)
    if prompt is None:
        return render(request, "_cache.html", {"target": None, "missing": id}, status=404)
    target, economics = await target_advice(session, prompt)
    return render(request, "_cache.html", {"target": target, "economics": economics, "bar": bar(target), "missing": None})
