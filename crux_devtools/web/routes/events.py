"""``GET /events``: server-sent events that tell open pages the report changed."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from ..views.prompt import shown_report

router = APIRouter()


@router.get("/events")
async def events(request: Request) -> StreamingResponse:
    report = shown_report(request.app.state.session)
    hello = {"version": report["version"]}
    return StreamingResponse(
        request.app.state.hub.stream(hello),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
