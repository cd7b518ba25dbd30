"""JSON mirrors of the pages: the prompt list and one prompt's whole report."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request

from ...inspector.api import is_stale
from ...inspector.report_types import PromptReport
from ..display import SafeJSONResponse, displayable
from ..views.prompt import lookup_prompt, prompt_href, shown_report

router = APIRouter(prefix="/api")


def summary(p: PromptReport, stale: bool, verified: bool) -> dict[str, Any]:
    return {
        "id": p["id"],
        "kind": p["kind"],
        "module": p["module"],
        "file": p["file"],
        "line": p["line"],
        "status": p["status"],
        "stale": stale,
        "verified": verified,  # the report's: a fresh load of the whole project confirmed it
        "total_tokens": p["total_tokens"],
        "default_budget": p["default_budget"],
        "has_model": p["has_model"],
        "tools": p["tools"],
        "examples": [e["name"] for e in p["examples"]],
        "url": prompt_href(p["id"]),
    }


@router.get("/prompts")
async def list_prompts(request: Request) -> SafeJSONResponse:
    report = shown_report(request.app.state.session)
    return SafeJSONResponse([summary(p, is_stale(report, p), report["verified"]) for p in report["prompts"]])


@router.get("/prompt")
async def get_prompt_by_query(request: Request, id: str = Query(...)) -> SafeJSONResponse:
    """``/api/prompt?id=..``: for ids that cannot be a path segment (``.``, ``..``)."""
    return await get_prompt(request, id)


@router.get("/prompts/{prompt_id:path}")
async def get_prompt(request: Request, prompt_id: str) -> SafeJSONResponse:
    report = shown_report(request.app.state.session)
    found = lookup_prompt(report, prompt_id)
    if found is None:
        known = ", ".join(p["id"] for p in report["prompts"]) or "none"
        raise HTTPException(404, displayable(f"no prompt or agent with id {prompt_id!r}; known ids: {known}"))
    body = {**found, "version": report["version"], "stale": is_stale(report, found), "verified": report["verified"], "errors": report["errors"]}
    return SafeJSONResponse(body)
