"""The inspector's request as sent is what ``generate`` sends: the summaries ``generate`` prepares
before sending are prepared for the view (extractive) or named (a model's, with the fallback shown);
one code for a budget nothing can meet; ``check`` warns only where ``generate`` would raise."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from cli_in_process import cli
from web_fakes import FakeSession

from crux_devtools import InputBudget, RequestCompositionError, ScriptedModel, agenerate, context, generate, offloadable, preview, prompt, summarizable
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.web.app import create_app
from crux_devtools.inspector.transport.inprocess import in_process

PROJECT = Path(__file__).parents[2] / "projects" / "summaries"
REPO = Path(__file__).resolve().parents[3]


def same_but_handles(shown: str, sent: str) -> bool:
    handle = re.compile(r"ofl_\d{24}")
    return "read_offload(handle=" in sent and handle.sub("ofl_…", shown) == handle.sub("ofl_…", sent)


def project_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("summaries_project_prompts", PROJECT / "prompts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def project_report() -> dict[str, Any]:
    async with ProjectSession(PROJECT, transport=in_process, watch=False, history=False, prewarm=False) as session:
        report = session.report
    assert report is not None and report["errors"] == []
    return {p["id"]: p["examples"][0] for p in report["prompts"]}


async def test_the_request_shown_is_what_generate_sends_with_the_extractive_summary_it_prepares() -> None:
    example = (await project_report())["extractive"]
    shown = example["preview"]
    module = project_module()
    model = ScriptedModel(["It failed."], capacity=module.CAPACITY)
    result = await agenerate(module.extractive, model=model)
    assert [(a.contributor, a.representation) for a in result.steps[0].request.adaptations] == [("ci-log", "summary")]
    assert shown["sent"]["system"] == model.requests[0].system  # the text
    assert shown["sent"]["messages"] == model.requests[0].messages
    assert shown["input_tokens"] == result.steps[0].request.input_tokens  # and the tokens
    assert [s["state"] for s in example["summaries"]] == ["prepared-here"]
    assert not (PROJECT / ".crux").exists()  # prepared in memory, nothing written to the project
    assert "FAILED tests/test_auth.py::test_token_refresh" in shown["sent"]["system"]


async def test_a_model_summary_is_named_and_the_request_shown_is_the_fallback_generate_sends_if_preparing_fails() -> None:
    example = (await project_report())["by-model"]
    [state] = example["summaries"]
    assert state["state"] == "generate-prepares" and state["model"] == "summarizer"
    assert state["note"] == "generate prepares it with summarizer before sending; the request shown is what is sent if preparing fails"
    assert example["preview"]["warnings"] == []  # the ladder authorises the fallback: nothing to warn about
    module = project_module()
    failing = ScriptedModel([], name="summarizer", capacity=module.CAPACITY)  # preparing the summary fails
    broken = module.triage("by-model", module.ladder("ci-log-by-model", model=failing), 3000)
    model = ScriptedModel(["It failed."], capacity=module.CAPACITY)
    result = await agenerate(broken, model=model)
    # The fallback is the offload rung: a run names its own handle (same length, same tokens).
    assert same_but_handles(example["preview"]["sent"]["system"], model.requests[0].system)
    assert example["preview"]["input_tokens"] == result.steps[0].request.input_tokens
    assert any("could not be prepared" in w for w in result.steps[0].request.warnings)
    working = ScriptedModel(["It failed."], capacity=module.CAPACITY)
    await agenerate(module.by_model, model=working)  # prepared with the model, as the label says
    assert "CI failed in test_token_refresh: the token was not renewed." in working.requests[0].system


async def test_the_page_labels_a_summary_generate_prepares_with_a_model() -> None:
    summarizer = ScriptedModel(["short"] * 4, name="summarizer")
    log = context("log", priority=50, system="\n\n".join(f"Day {d}: the sync stalled at 03:{d:02d}. It resumed later." for d in range(300)))
    p = prompt("ladder", system="You answer.", use=[offloadable(summarizable(log, model=summarizer))], prompt="Why?", examples={"one": {}})
    app = create_app(FakeSession(REPO, [p]))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
        page = (await client.get("/prompts/ladder?budget_for=request&budget=2000")).text
    banner = page.split('id="model-summaries"', 1)[1].split("</section>", 1)[0]
    assert '<code>generate</code> prepares the summary of <span class="mono">log</span> with <span class="mono">summarizer</span> before sending.' in banner
    assert "The request below is what is sent if preparing it fails." in banner
    assert 'data-source="log" data-rung="offload"' in page  # the fallback, sent if preparing fails
    bare = prompt("bare", system="You answer.", use=[summarizable(log, model=summarizer)], prompt="Why?", examples={"one": {}})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(FakeSession(REPO, [bare]))), base_url="http://127.0.0.1:4400") as client:
        over = (await client.get("/prompts/bare?budget_for=request&budget=2000")).text
    refusal = over.split('id="over-limit"', 1)[1].split("</section>", 1)[0]
    assert "REPRESENTATION_UNAVAILABLE" in refusal and "unless the summary it prepares first fits" in refusal
    assert 'prepares the summary of <span class="mono">log</span> with <span class="mono">summarizer</span> before sending' in refusal
    assert summarizer.requests == []  # the page never calls the summary model on its own


def test_one_code_for_a_budget_nothing_can_meet_in_check_and_generate_and_warnings_only_where_generate_raises() -> None:
    done = cli("check", str(PROJECT), "--timeout", "20", cwd=REPO)  # the command in this process, its worker in-process
    assert done.returncode == 1, done.stdout + done.stderr
    [failure] = done.stdout.splitlines()
    module = project_module()
    with pytest.raises(RequestCompositionError) as caught:
        generate(module.hopeless, model=ScriptedModel(["never"], capacity=module.CAPACITY))
    assert caught.value.code == "REQUEST_TOO_LARGE"
    message = str(caught.value).removeprefix("REQUEST_TOO_LARGE: ")
    assert failure.startswith("prompts.py:35: RequestCompositionError[REQUEST_TOO_LARGE]: agent 'hopeless' example 'default': ")
    assert failure.endswith(message)
    warnings = [line for line in done.stderr.splitlines() if ": warning: " in line]
    assert warnings == [
        "prompts.py:32: warning: agent 'strict' example 'default': 'ci-log-strict': generate raises REPRESENTATION_UNAVAILABLE "
        "unless the summary store it is given has this summary (on_miss='fail'); prepare it into that store with prepare_summaries"
    ]
    assert "not prepared" not in done.stderr


def test_a_missing_summary_is_the_reason_only_when_a_summary_could_make_the_request_fit() -> None:
    module = project_module()
    log = context("log", priority=50, system=module.ci_log())
    plain = prompt("plain", system="You explain CI failures.", use=[summarizable(log)], prompt="Why?")
    hopeless = preview(plain, model=ScriptedModel([], capacity=module.CAPACITY), input_budget=InputBudget(max=8))
    assert (hopeless.status, hopeless.error_code) == ("over-limit", "REQUEST_TOO_LARGE")  # not even the prompt's own text fits
    assert "not prepared" not in hopeless.warnings[0]
    hopeful = preview(plain, model=ScriptedModel([], capacity=module.CAPACITY), input_budget=InputBudget(max=3000))
    assert (hopeful.status, hopeful.error_code) == ("over-limit", "REPRESENTATION_UNAVAILABLE")  # a summary could fit
    sent = generate(plain, model=ScriptedModel(["ok"], capacity=module.CAPACITY), input_budget=InputBudget(max=3000))
    assert sent.steps[0].request.adaptations[0].representation == "summary"
