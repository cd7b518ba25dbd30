"""Every rung of the vocabulary (core/plan/rungs.py) reaches both front ends with its label, its
"sent in place of ..." sentence and its colour, and a rung kind added to the vocabulary alone shows
up everywhere with its own words (never as another rung's).

A real plan of a real prompt (the web fake session's report) is rewritten so that its system text
holds one part at every rung; the web page is fetched from the real app and the TUI's Request tab is
rendered by its real renderer. Every term is relabelled first, so a surface that spelled a rung out
by hand instead of reading the vocabulary fails.
"""

from __future__ import annotations

import html
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console
from rich.padding import Padding
from rich.rule import Rule

sys.path.insert(0, str(Path(__file__).parent))
from test_vocabulary import client, web_session  # noqa: E402,F401  (the fixtures: the real app over the ladder prompt)
from web_fakes import FakeSession as WebSession  # noqa: E402

from crux_devtools.core.plan import rungs  # noqa: E402
from crux_devtools.tui.widgets.request import render_request, system_section  # noqa: E402

NEW_RUNG = "squeezed"  # a rung kind this version's planner does not have: added to the vocabulary only


@pytest.fixture
def vocabulary(monkeypatch: pytest.MonkeyPatch) -> dict[str, rungs.RungTerm]:
    """Every rung relabelled, with its own sentence and colours, plus one new rung kind."""
    terms: dict[str, rungs.RungTerm] = {}
    for n, name in enumerate((*rungs.RUNGS, NEW_RUNG)):
        base = rungs.RUNG_TERMS.get(name) or rungs.RungTerm(name, name, "", "", "", "{label}", "")
        terms[name] = replace(
            base,
            label=f"L-{name}",
            description=f"what {name} means",
            web_colour=f"#{n + 1:02d}{n + 1:02d}{n + 1:02d}",
            tui_colour=f"color({n + 100})",
            sent_as="{label} as sent" if name not in ("authored", NEW_RUNG) else "{label}: {variant}",
            in_place=f"S-{name}: sent in place of {{source}}",
        )
        monkeypatch.setitem(rungs.RUNG_TERMS, name, terms[name])
    return terms


def every_rung_example(report: dict[str, Any], names: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The report's first prompt and example, its plan rewritten: one ladder part at each rung (the
    omitted one sends no text, as the planner's does), the rest of the request as planned."""
    prompt = report["prompts"][0]
    example = prompt["examples"][0]
    preview = example["preview"]
    outside = [c for c in preview["contributions"] if c["span"] is None]
    system, parts = "", []
    for name in names:
        contribution = {"contributor": f"part-{name}", "kind": "ladder", "representation": name, "tokens": 5, "tools": [],
                        "span": None, "variant": f"alt-{name}", "handle": f"ofl_{name}"}
        if name != "omitted":
            start = len(system) + (2 if system else 0)
            system += ("\n\n" if system else "") + f"text sent for {name}"
            contribution["span"] = [start, len(system)]
        parts.append(contribution)
    rewritten = {**preview, "contributions": [*parts, *outside], "sent": {**preview["sent"], "system": system}}
    return prompt, {**example, "preview": rewritten}


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


async def test_every_rung_reaches_the_web_page_with_its_label_sentence_and_colour(
    client: httpx.AsyncClient, web_session: WebSession, vocabulary: dict[str, rungs.RungTerm]
) -> None:
    report = web_session.report
    assert report is not None
    prompt, example = every_rung_example(report, list(vocabulary))
    prompt["examples"][0] = example  # the session serves the rewritten plan
    page = (await client.get("/prompts/ladders")).text
    assert '<link rel="stylesheet" href="/rungs.css">' in page
    css = await client.get("/rungs.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    shown = text_of(page)
    for name, term in vocabulary.items():
        tag = rungs.sent_as(name, variant=f"alt-{name}")
        assert tag.startswith(term.label)
        chip = re.search(rf'<span class="rung rung-{name}" title="what {name} means">([^<]*)</span>', page)
        assert chip is not None, name
        assert html.unescape(chip.group(1)) == tag
        assert f"S-{name}: sent in place of part-{name}" in shown
        assert f"--rung-{name}: {term.web_colour};" in css.text
        assert f".rung-{name} {{ --rung: var(--rung-{name}); }}" in css.text


def test_every_rung_reaches_the_tui_request_tab_with_its_label_sentence_and_colour(
    web_session: WebSession, vocabulary: dict[str, rungs.RungTerm]
) -> None:
    report = web_session.report
    assert report is not None
    prompt, example = every_rung_example(report, list(vocabulary))
    items, _selected = system_section(example["preview"], {}, None)
    console = Console(width=200, record=True, color_system=None)
    console.print(render_request(prompt, example))
    shown = console.export_text()
    for name, term in vocabulary.items():
        tag = rungs.sent_as(name, variant=f"alt-{name}")
        rule = next(item for item in items if isinstance(item, Rule) and str(item.title).startswith(f"part-{name} · ladder · "))
        assert f" · {tag}" in str(rule.title)
        assert rule.style == term.tui_colour  # the rule is drawn in the rung's own colour
        sentence = f"S-{name}: sent in place of part-{name}"
        assert any(isinstance(item, Padding) and sentence in str(item.renderable) for item in items)
        assert tag in shown and sentence in shown


def test_a_rung_the_vocabulary_does_not_know_is_shown_by_its_own_name() -> None:
    """An old or newer report may carry a rung this version does not know: never another rung's words."""
    assert rungs.sent_as("future-rung", variant="v") == "future-rung"
    assert rungs.in_place("future-rung", source="s") == ""
    assert rungs.rung_term("future-rung").tui_colour not in {t.tui_colour for t in rungs.RUNG_TERMS.values()}


def test_a_tags_missing_value_leaves_its_words_out() -> None:
    assert rungs.sent_as("offload", handle="ofl_1") == "offload preview · handle ofl_1"
    assert rungs.sent_as("offload") == "offload preview"
    assert rungs.sent_as("authored") == "authored" and rungs.sent_as("authored", variant="index") == "authored: index"
    assert "None" not in rungs.in_place("authored", source="catalog")
