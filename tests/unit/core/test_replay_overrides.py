"""``Overrides`` has one wire form: ``to_dict`` / ``from_dict`` round-trip, and a bad value is refused by name.

Every override reaches every front end from its field alone: each one's sample value (``SAMPLES``)
is given as the CLI's option, as the MCP replay tools' argument, as the web form's fields and as
the TUI's input, and each reads it back as that override and nothing else. The worker's side is
``tests/functional/inspector/test_replay_overrides_wire.py`` (with the same samples)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import click
import pytest

from crux_devtools.cli.replay import build_overrides, option_name, repeatable, replay
from crux_devtools.core.record.replay_overrides import Overrides, form_name, wire_fields

REPO = Path(__file__).resolve().parents[3]
PANEL = REPO / "templates" / "_replay_panel.html"
SAMPLE_PROJECT = REPO / "sample_project"  # its pyproject names the capacity profile "nimbus-local"

# A value other than the default for each override, valid for step 1 of the sample's recorded run
# (the worker's test replays it with each).
SAMPLES: dict[str, Any] = {
    "max": 5000,
    "optimize_at": 3000,
    "model": "nimbus-local",
    "rungs": (("catalog", "authored:catalog-index"),),
    "drop": ("house-rules",),
}


def test_every_override_survives_the_json_round_trip() -> None:
    full = Overrides(max=2000, optimize_at=1500, model="nimbus-local", rungs=(("catalog", "summary"), ("log", "offload")), drop=("house-rules", "examples"))
    wire = json.loads(json.dumps(full.to_dict()))
    assert Overrides.from_dict(wire) == full
    assert list(wire) == [f.name for f in wire_fields()]  # an override added later is in the wire form as its default here
    assert {k: wire[k] for k in ("max", "optimize_at", "model", "rungs", "drop")} == {
        "max": 2000, "optimize_at": 1500, "model": "nimbus-local", "rungs": {"catalog": "summary", "log": "offload"}, "drop": ["house-rules", "examples"]}
    assert Overrides.from_dict({}) == Overrides() and Overrides().empty and not full.empty
    assert Overrides.from_dict(Overrides().to_dict()) == Overrides()


def test_the_wire_form_names_every_field_but_the_profile() -> None:
    # the profile is found again by its name in the worker; every other field crosses
    assert [f.name for f in wire_fields()] == list(Overrides().to_dict())
    assert "profile" not in Overrides().to_dict()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"max": "2000"}, "override 'max' must be a whole number of tokens, at least 1, or left out, got '2000'"),
        ({"max": 0}, "override 'max' must be a whole number of tokens, at least 1, or left out, got 0"),
        ({"optimize_at": True}, "override 'optimize_at' must be a whole number of tokens"),
        ({"model": ""}, "override 'model' must be a capacity profile's name or left out, got ''"),
        ({"rungs": [["catalog", "summary"]]}, "override 'rungs' must be an object of contributor: rung or left out"),
        ({"rungs": {"catalog": 3}}, "override 'rungs' must be an object of contributor: rung"),
        ({"drop": "house-rules"}, "override 'drop' must be a list of context ids or left out, got 'house-rules'"),
        ({"budget": 10}, f"unknown override 'budget'; the overrides are: {', '.join(f.name for f in wire_fields())}"),
        (["max", 10], "overrides must be an object of override: value, got list"),
    ],
)
def test_a_bad_value_is_refused_with_what_it_must_be(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        Overrides.from_dict(data)


def test_every_override_has_a_sample_value_here() -> None:
    missing = [f.name for f in wire_fields() if f.name not in SAMPLES]
    assert missing == [], f"add a sample value of the new override(s) {missing} to SAMPLES"
    for f in wire_fields():
        assert SAMPLES[f.name] != f.default


def test_every_override_has_its_form_input() -> None:
    # the web form's reading follows from the field; its input is placed by hand
    inputs = set(re.findall(r'name="([a-z_]+)[":]', PANEL.read_text(encoding="utf-8")))
    for f in wire_fields():
        assert form_name(f) in inputs, f"add an input named {form_name(f)!r} (override {f.name!r}) to {PANEL.name}'s form"


def each_sample() -> list[Any]:
    return [pytest.param(Overrides(**{f.name: SAMPLES[f.name]}), id=f.name) for f in wire_fields() if f.name in SAMPLES]


def option_values(overrides: Overrides) -> list[tuple[dataclasses.Field[Any], str]]:
    """Each value of the set overrides as the CLI option's text (a pair as ``C=R``), by its field."""
    return [(f, "=".join(str(a) for a in args)) for f, args in overrides.shown()]


def as_planned(overrides: Overrides) -> Overrides:
    return dataclasses.replace(overrides, profile=None)  # the profile is found by the model's name


@pytest.mark.parametrize("overrides", each_sample())
def test_each_override_is_an_option_of_the_cli(overrides: Overrides) -> None:
    args = [text for f, value in option_values(overrides) for text in (option_name(f), value)]
    params = replay.make_context("replay", [str(SAMPLE_PROJECT), "--run", "r", *args]).params
    built = build_overrides(SAMPLE_PROJECT, params)
    assert as_planned(built) == overrides
    assert (built.profile is not None) == (overrides.model is not None)  # a model's capacity profile, read from the pyproject


def test_the_options_follow_the_table_between_source_and_brief() -> None:
    names = [p.name for p in replay.params]
    assert names[names.index("source") + 1:names.index("brief")] == [form_name(f) for f in wire_fields()]
    for f in wire_fields():
        [option] = [p for p in replay.params if p.name == form_name(f)]
        assert isinstance(option, click.Option) and option.opts == [option_name(f)] and option.help == f.metadata["help"]
        assert option.metavar == f.metadata["metavar"] and option.multiple == repeatable(f)


class RecordingTools:
    """``ProjectTools``' ``replay`` as the MCP server calls it: the arguments it was given."""

    def __init__(self) -> None:
        self.given: dict[str, Any] = {}

    async def replay(self, run: str, step: int = 0, **given: Any) -> dict[str, Any]:
        self.given = given
        return {"run": run}


@pytest.mark.parametrize("overrides", each_sample())
def test_each_override_is_an_argument_of_the_mcp_replay_tools(overrides: Overrides) -> None:
    from crux_devtools.mcp_server.server import build_server

    tools = RecordingTools()
    server = build_server(tools, allow_spend=True)  # type: ignore[arg-type]
    for name in ("replay", "replay_send"):
        tool = server._tool_manager.get_tool(name)
        assert tool is not None
        properties = list(tool.parameters["properties"])
        assert properties[properties.index("source") + 1:][:len(wire_fields())] == [form_name(f) for f in wire_fields()], name
    arguments: dict[str, Any] = {}
    for f, value in option_values(overrides):
        arguments[form_name(f)] = [*arguments.get(form_name(f), []), value] if repeatable(f) else getattr(overrides, f.name)
    answer = asyncio.run(server.call_tool("replay", {"run": "r", **arguments}))
    assert not answer.is_error, answer
    assert as_planned(build_overrides(SAMPLE_PROJECT, tools.given)) == overrides


@pytest.mark.parametrize("overrides", each_sample())
def test_each_override_is_read_from_the_web_form_and_its_query(overrides: Overrides) -> None:
    from crux_devtools.web.views.replay import overrides_query, parse_overrides

    fields = [(form_name(f), value) for f, value in option_values(overrides)]
    assert parse_overrides(fields) == (overrides, [])
    assert parse_overrides(parse_qsl(overrides_query(overrides))) == (overrides, [])


@pytest.mark.parametrize("overrides", each_sample())
def test_each_override_is_an_input_of_the_tui_replay_screen(overrides: Overrides) -> None:
    from crux_devtools.tui.screens.overrides import edited_fields, input_text, read_inputs

    assert edited_fields() == wire_fields()  # every kind of override has its input
    texts = {form_name(f): input_text(f, overrides) for f in edited_fields()}
    assert read_inputs(texts) == overrides
    assert read_inputs({name: "" for name in texts}) == Overrides()


def test_a_bad_tui_input_is_refused_with_what_it_must_be() -> None:
    from crux_devtools.tui.screens.overrides import read_inputs

    with pytest.raises(ValueError, match="^override 'max' must be a whole number of tokens, at least 1, or left out, got 'lots'$"):
        read_inputs({"max": "lots"})
    with pytest.raises(ValueError, match="^override 'rungs' must be an object of contributor: rung"):
        read_inputs({"rung": "catalog"})


def test_the_cli_keeps_its_errors_for_a_bad_rung_and_an_unknown_model() -> None:
    with pytest.raises(click.BadParameter, match=r"^--rung takes CONTRIBUTOR=RUNG \(e.g. docs=summary\), got 'catalog'$") as bad:
        build_overrides(SAMPLE_PROJECT, {"rung": ("catalog",), "model": "nope"})
    assert bad.value.param_hint == "--rung"
    with pytest.raises(click.ClickException, match="^--model 'nope': no capacity profile of that name in .*; known: nimbus-local$"):
        build_overrides(SAMPLE_PROJECT, {"model": "nope"})
    assert build_overrides(SAMPLE_PROJECT, {}) == Overrides()


def test_an_override_is_planned_in_place_of_the_input_its_apply_names() -> None:
    recorded = {"model": "recorded", "budget": {"optimize_at": 100, "max": 200}, "rungs": (), "drop": ()}
    inputs, replaced = Overrides(max=300, model="other", drop=("notes",)).applied(recorded)
    assert inputs == {"model": "other", "budget": {"optimize_at": 100, "max": 300}, "rungs": (), "drop": ("notes",)}
    assert replaced == {"budget.max": 300, "model": "other", "drop": ("notes",)}
    assert Overrides(optimize_at=50).applied({**recorded, "budget": None})[0]["budget"] == {"optimize_at": 50}
    assert Overrides().applied(recorded) == (recorded, {})
    with pytest.raises(KeyError, match="override 'model' replaces 'model', which is not one of the recorded inputs"):
        Overrides(model="other").applied({"budget": None})
