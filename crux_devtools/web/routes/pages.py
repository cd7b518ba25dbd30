"""HTML pages: the prompt list, one prompt's report, agent runs, and project source excerpts.

Every page is one template; an htmx request (``HX-Request``) gets only the block it swaps, rendered
from the same template, so a live update or a budget change never reloads the page.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ...inspector.api import failed_run, find_prompt, is_stale
from ...inspector.errors import FailedExample, LoadError
from ...inspector.report_types import PromptReport, Report
from ...inspector.worker.run_confirm import asks_confirmation
from ...inspector.features.runs.costs import prices_for
from ..display import raw_query_value
from ..input_check import parse_and_check
from ..runs_access import messages_at_step, recent_runs
from ..source import source_excerpt
from ..views.prompt import (
    PromptView,
    colour_map,
    controls,
    diff_view,
    index_view,
    lookup_prompt,
    offered_tools,
    part_views,
    prompt_href,
    report_header,
    shown_report,
    status_chips,
    token_bar,
)
from ..views.list import list_view, parse_list_filters
from ..views.planning import planning_view, run_view
from ..views.sent import sent_view
from ..views.runs import run_href, status_chip

router = APIRouter()
log = logging.getLogger(__name__)


def render(request: Request, name: str, context: dict[str, Any], *, block: str | None = None, status: int = 200) -> Response:
    templates = request.app.state.templates
    if block is not None:
        return templates.TemplateResponse(request, name, context, block_name=block, status_code=status)
    return templates.TemplateResponse(request, name, context, status_code=status)


def wants_block(request: Request) -> bool:
    """htmx swaps (not a boosted full navigation) get just the block."""
    return request.headers.get("hx-request") == "true" and request.headers.get("hx-history-restore-request") != "true"


async def url_encoded_form(request: Request) -> dict[str, str]:
    """The fields of an htmx form post (url-encoded; no multipart parser needed for these small forms)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    return {key: values[-1] for key, values in parse_qs(body, keep_blank_values=True).items()}


@router.get("/", response_class=HTMLResponse)
async def index(request: Request, q: str | None = Query(None), status: str | None = Query(None)) -> Response:
    """The prompt list, narrowed by ``q`` (id, module, file) and ``status``; grouped by module.

    An htmx request (a search as one types, a status filter, a live update) gets the list block, and
    ``HX-Replace-Url`` keeps the address bar on the page's state, so it can be shared or reloaded."""
    report = shown_report(request.app.state.session)
    filters, problems = parse_list_filters(q, status)
    view = list_view(report, filters, problems)
    if wants_block(request):
        response = render(request, "index.html", {"view": view}, block="listing")
        response.headers["HX-Replace-Url"] = filters.href()
        return response
    return render(request, "index.html", {"view": view})


def parse_budget(raw: str | None) -> tuple[int | None, str | None]:
    if raw is None or raw.strip() == "":
        return None, None
    try:
        value = int(raw)
    except ValueError:
        return None, f"budget {raw!r} is not a whole number of tokens"
    if value <= 0:
        return None, f"budget {value} must be a positive number of tokens"
    return value, None


async def build_prompt_view(
    request: Request, prompt: PromptReport, example: str | None, budget: int | None, input_text: str,
    budget_for: str | None = None, view_name: str | None = None, at_step: str | None = None,
) -> PromptView:
    session = request.app.state.session
    report = shown_report(session)
    header = report_header(report)
    ctl = controls(prompt, example, budget, input_text, budget_for, view_name, at_step)
    view = PromptView(
        prompt=prompt,
        header=header,
        chips=status_chips(prompt["status"], is_stale(report, prompt)),
        controls=ctl,
        input_errors=[],
        example_report=None,
        inspection=None,
    )
    custom: dict[str, Any] | None = None
    if input_text.strip():
        custom, view.input_errors = parse_and_check(input_text, prompt["input_schema"])
        if view.input_errors:  # nothing was evaluated: the chip says why, never the prompt's own status
            view.status = "invalid-input"
            view.chips = status_chips(view.status, is_stale(report, prompt))
            return view
    messages: dict[str, Any] | None = None
    if ctl.at_step:  # a later step of a run: its messages (tool traffic included) go with the input
        messages, view.at_step = await messages_at_step(session, ctl.at_step)
    cached = next((e for e in prompt["examples"] if e["name"] == ctl.example), None)
    if custom is None and budget is None and cached is not None and messages is None:
        view.example_report = cached
    elif custom is not None or ctl.example is not None or budget is not None or messages is not None:
        try:
            view.example_report = await session.evaluate(
                prompt["id"], example=ctl.example, input=custom,
                token_budget=budget if ctl.budget_for == "system" else None,
                input_budget=budget if ctl.budget_for == "request" else None,
                **({"messages": messages} if messages is not None else {}),
            )
        except Exception as exc:  # the worker's failure becomes an error panel, never a 500
            log.warning("evaluating %s failed: %s", prompt["id"], exc)
            view.example_report = FailedExample(ctl.example or "custom", custom or {}, LoadError.plain(type(exc).__name__, str(exc))).to_dict()
    ex = view.example_report
    inspection = ex["inspection"] if ex is not None else None
    view.planning = planning_view(ex, prompt["plan_model"])
    # One status for the example, decided in the worker from the plan (api.py: ExampleReport["status"]).
    view.status = ex["status"] if ex is not None else prompt["status"]
    if inspection is not None:
        view.inspection = inspection
        view.colours = colour_map(prompt, inspection)
        view.parts = part_views(inspection, view.colours, prompt)
        view.bar = token_bar(inspection, view.parts)
        view.sent = sent_view(view.example_report, view.colours, prompt)
        view.tools, view.unsent_tools = offered_tools(inspection, view.sent)
        # Versions are compared as loaded (the report's own budget), so a slider move is not a "change".
        previous = session.previous_system(prompt["id"], ctl.example) if ctl.example and custom is None else None
        baseline = cached["inspection"]["system"] if cached is not None and cached["inspection"] is not None else None
        view.diff = diff_view(previous, baseline if custom is None else None)
    if view.example_report is not None:
        view.chips = status_chips(view.status, is_stale(report, prompt))
    return view


@router.get("/prompts/{prompt_id:path}", response_class=HTMLResponse)
async def prompt_page(request: Request, prompt_id: str) -> Response:
    """One prompt's report; ``prompt_id`` may hold ``/`` (links encode it as ``%2F``)."""
    return await show_prompt(request, prompt_id)


@router.get("/prompt", response_class=HTMLResponse)
async def prompt_page_by_query(request: Request, id: str = Query(...)) -> Response:
    """``/prompt?id=..``: the page of a prompt whose id a browser cannot keep in a path (``.``, ``..``)."""
    return await show_prompt(request, id)


async def show_prompt(request: Request, prompt_id: str) -> Response:
    """The page (or, for htmx, its report block); the page state comes from the query string."""
    query = request.query_params
    report = shown_report(request.app.state.session)
    prompt = lookup_prompt(report, prompt_id)
    if prompt is None:
        ran = run_endpoint_of(report, prompt_id)
        if ran is not None:  # the Run button's address, reloaded or bookmarked: the prompt's page
            return RedirectResponse(prompt_href(ran["id"]), status_code=303)
        return missing(request, report, prompt_id)
    value, budget_error = parse_budget(query.get("budget"))
    page = await build_prompt_view(
        request, prompt, query.get("example"), value, query.get("input", ""), query.get("budget_for"), query.get("view"), query.get("at_step")
    )
    context: dict[str, Any] = {"view": page, "budget_error": budget_error}
    if not wants_block(request):  # the full page shows the recent runs at once (no shift when they load)
        context["recent"] = await recent_runs(request.app.state.session, prompt["id"])
    return render(request, "prompt.html", context, block="report" if wants_block(request) else None)


def run_endpoint_of(report: Report, path_id: str) -> PromptReport | None:
    """The prompt whose Run endpoint ``/prompts/{id}/run`` a GET names (no prompt has the whole id)."""
    if not path_id.endswith("/run"):
        return None
    return lookup_prompt(report, path_id.removesuffix("/run"))


def missing(request: Request, report: Report, prompt_id: str) -> Response:
    context = {"view": index_view(report), "missing": prompt_id}
    if wants_block(request):  # a live update after a rename: say so in place (htmx ignores a 404)
        return render(request, "missing.html", context, block="gone")
    return render(request, "missing.html", context, status=404)


@router.post("/prompts/{prompt_id:path}/summaries", response_class=HTMLResponse)
async def prepare_summaries(request: Request, prompt_id: str) -> Response:
    return await prepare_and_show(request, prompt_id)


@router.post("/prompt/summaries", response_class=HTMLResponse)
async def prepare_summaries_by_query(request: Request, id: str = Query(...)) -> Response:
    return await prepare_and_show(request, id)


async def prepare_and_show(request: Request, prompt_id: str) -> Response:
    """Prepare an example's missing summaries (extractive; a hierarchical one only with
    ``allow_models``), then answer with the report block of the same page state."""
    session = request.app.state.session
    prompt = lookup_prompt(session.report, prompt_id)
    if prompt is None:
        return missing(request, shown_report(session), prompt_id)
    form = await url_encoded_form(request)
    value, budget_error = parse_budget(form.get("budget"))
    budget_for = form.get("budget_for") or None
    input_text = form.get("input", "")
    custom = None
    if input_text.strip():
        custom, errors = parse_and_check(input_text, prompt["input_schema"])
        if errors:
            custom = None
    ctl = controls(prompt, form.get("example") or None, value, input_text, budget_for)
    try:
        result = await session.prepare_summaries(
            prompt["id"], example=None if custom is not None else ctl.example, input=custom, contributor=form.get("contributor") or None,
            allow_models=form.get("allow_models") in ("1", "true", "on"), token_budget=value if ctl.budget_for == "system" else None,
        )
    except Exception as exc:  # shown in the page: a failing summary model must not take it down
        log.warning("preparing summaries of %s failed: %s", prompt_id, exc)
        result = {"prepared": [], "skipped": [], "error": LoadError.plain(type(exc).__name__, str(exc)).to_dict()}
    prompt = lookup_prompt(session.report, prompt_id) or prompt  # the report the reload made
    page = await build_prompt_view(request, prompt, ctl.example, value, input_text, budget_for, form.get("view"), form.get("at_step"))
    context = {"view": page, "budget_error": budget_error, "prepared": result, "contributor": form.get("contributor")}
    return render(request, "prompt.html", context, block="report" if wants_block(request) else None)


@router.post("/prompts/{prompt_id:path}/run", response_class=HTMLResponse)
async def run_prompt(request: Request, prompt_id: str) -> Response:
    return await run_and_show(request, prompt_id)


@router.get("/prompt/run", response_class=HTMLResponse)
async def run_address_by_query(request: Request, id: str = Query(...)) -> Response:
    """The Run endpoint of a ``/prompt?id=..`` page, opened with GET: that page."""
    return RedirectResponse(prompt_href(id), status_code=303)


@router.post("/prompt/run", response_class=HTMLResponse)
async def run_prompt_by_query(request: Request, id: str = Query(...)) -> Response:
    return await run_and_show(request, id)


async def run_and_show(request: Request, prompt_id: str) -> Response:
    """Run an agent with the form's example or custom input; the run panel shows every step."""
    session = request.app.state.session
    prompt = lookup_prompt(session.report, prompt_id)
    if prompt is None:
        return render(request, "_run.html", {"run": None, "problem": f"no prompt or agent with id {prompt_id!r}"}, status=404)
    if not prompt["has_model"]:
        return render(request, "_run.html", {"run": None, "problem": f"{prompt_id!r} has no model to run"}, status=400)
    form = await url_encoded_form(request)
    example = form.get("example") or None
    input_text = form.get("input", "")
    custom = None
    if input_text.strip():
        custom, errors = parse_and_check(input_text, prompt["input_schema"])
        if errors:
            problem = "; ".join(f"{e.field or 'input'}: {e.message}" for e in errors)
            return render(request, "_run.html", {"run": None, "problem": problem}, status=422)
    try:  # the worker decides whether the model it is about to call needs the user's go-ahead
        result = await session.run(prompt["id"], example=example, input=custom, confirm=form.get("confirm") or None)
    except Exception as exc:  # shown in the run panel: a failing agent must not take the page down
        log.warning("running %s failed: %s", prompt_id, exc)
        result = failed_run(prompt["id"], LoadError.plain(type(exc).__name__, str(exc)).to_dict(), input=custom)
    if asks_confirmation(result):  # nothing ran: the confirm button posts back here with the model's token
        context = {"prompt_id": prompt_id, "model": result.get("model"), "confirm": result.get("confirm"),
                   "estimate": prices_for(getattr(session, "root", None)).question(result),  # priced at the model the token allows
                   "run_href": request.scope.get("raw_path", b"").decode("latin-1") or request.url.path}
        return render(request, "_run_confirm.html", context)
    link = run_href(str(result["id"])) if result.get("id") and result.get("recorded", True) else None
    context = {"run": run_view(result), "problem": None, "run_link": link, "record_error": result.get("record_error"),
               "status": status_chip(result["status"]) if result.get("status") else None}
    return render(request, "_run.html", context)


@router.get("/source", response_class=HTMLResponse)
async def source(request: Request, file: str = Query(...), line: int | None = Query(None)) -> Response:
    session = request.app.state.session
    # the file name's exact bytes (links percent-encode them), so a non-UTF-8 name opens its file
    name = raw_query_value(request.scope.get("query_string", b""), "file") or file
    excerpt = source_excerpt(session.root, name, line)
    return render(request, "source.html", {"excerpt": excerpt}, status=200 if excerpt.lines else 404)
