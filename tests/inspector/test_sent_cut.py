"""The sent system text is cut part by part in one place (``inspector.sent.cut_system``), and every
surface (CLI and TUI Request tab, TUI run detail, web prompt page, web run page) shows that cut."""

from __future__ import annotations

import json

from test_sent import laddered

from crux_devtools import InputBudget, ModelCapacityProfile, ScriptedModel, preview
from crux_devtools.inspector.features.shown.sent import UNATTRIBUTED, cut_system, system_parts
from crux_devtools.tui.runs_render import system_pieces
from crux_devtools.web.views.run import system_parts as run_page_parts
from crux_devtools.web.views.sent import sent_view


def planned(limit: int) -> dict:
    """A real plan of a laddered prompt, as a report holds it (through JSON)."""
    model = ScriptedModel(["done"], capacity=ModelCapacityProfile(1_000_000, 0, "exact"))
    p = preview(laddered(), input={"message": "Where is my invoice?"}, model=model, input_budget=InputBudget(max=limit))
    return json.loads(json.dumps(p.to_dict()))


def test_every_surface_shows_the_same_parts_of_a_real_sent_system_text() -> None:
    for limit in (3000, 1500):
        report = planned(limit)
        system = report["sent"]["system"]
        contributions = report["contributions"]
        cut = cut_system(system, contributions)
        assert "".join(p.text or "" for p in cut) == system
        expected = [(p.contributor, p.text) for p in cut if p.attributed]
        assert {c["representation"] for c in contributions} - {"full"}, "the budget adapts some rung"
        assert [(p.contributor, p.text) for p in system_parts(report) if p.text is not None] == expected
        example = {
            "name": "x", "input": {}, "error": None, "inspection": None, "preview": report, "preview_error": None,
            "truncated": False, "status": "fits", "summaries": [],
        }
        assert [(p.source, p.text) for p in sent_view(example, {}).parts] == expected  # type: ignore[arg-type]
        assert [(p.contributor, p.text) for p in run_page_parts(system, contributions, {})] == expected
        assert [((p.contribution or {}).get("contributor"), p.text) for p in system_pieces(system, contributions) if p.contribution] == expected


def test_the_cut_keeps_every_character_once_and_names_text_no_span_covers() -> None:
    system = "intro Hello\n\nWorld, more"  # "intro " is covered by no span; the text was cut at 24
    contributions = [
        {"contributor": "a", "kind": "context", "representation": "full", "tokens": 2, "span": [6, 11]},
        {"contributor": "b", "kind": "ladder", "representation": "authored", "variant": "short", "tokens": 9, "span": [9, 40]},
        {"contributor": "c", "kind": "ladder", "representation": "omitted", "tokens": 0, "span": None},
    ]
    cut = cut_system(system, contributions)
    assert [(p.contributor, p.text) for p in cut] == [(UNATTRIBUTED, "intro "), ("a", "Hello"), ("b", "\n\nWorld, more")]
    assert cut[2].rung == "authored: short" and cut[2].span == (9, 40) and cut[0].contribution is None
    assert [(p.contributor, p.text) for p in system_parts({"sent": {"system": system}, "contributions": contributions})] == [
        (UNATTRIBUTED, "intro "), ("a", "Hello"), ("b", "\n\nWorld, more"), ("c", None),
    ]
