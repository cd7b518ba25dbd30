"""JSON mirrors of the pages (SPEC section 7): the prompt list and one prompt's whole report."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request

from ..inspector.api import is_stale
from .display import SafeJSONResponse, displayable
from .views import lookup_prompt, prompt_href

router = APIRouter(prefix="/api")


def summary(p: dict[str, Any], stale: bool) -> dict[str, Any]:
    return {
        "id": p.get("id"),
        "kind": p.get("kind"),
        "module": p.get("module"),
        "file": p.get("file"),
        "line": p.get("line"),
        "status": p.get("status"),
        "stale": stale,
        "total_tokens": p.get("total_tokens"),
        "default_budget": p.get("default_budget"),
        "has_model": p.get("has_model"),
        "tools": p.get("tools", []),
        "examples": [e.get("name") for e in p.get("examples") or []],
        "url": prompt_href(str(p.get("id"))),
    }


@router.get("/prompts")
async def list_prompts(request: Request) -> SafeJSONResponse:
    report = request.app.state.session.report or {}
    return SafeJSONResponse([summary(p, is_stale(report, p)) for p in report.get("prompts", [])])


@router.get("/prompt")
async def get_prompt_by_query(request: Request, id: str = Query(...)) -> SafeJSONResponse:
    """``/api/prompt?id=..``: for ids that cannot be a path segment (``.``, ``..``)."""
    return await get_prompt(request, id)


@router.get("/prompts/{prompt_id:path}")
async def get_prompt(request: Request, prompt_id: str) -> SafeJSONResponse:
    report = request.app.state.session.report or {}
    found = lookup_prompt(report, prompt_id)
    if found is None:
        known = ", ".join(str(p.get("id")) for p in report.get("prompts", [])) or "none"
        raise HTTPException(404, displayable(f"no prompt or agent with id {prompt_id!r}; known ids: {known}"))
    body = {**found, "version": report.get("version"), "stale": is_stale(report, found), "errors": report.get("errors") or []}
    return SafeJSONResponse(body)
