"""``Overrides`` has one wire form: ``to_dict`` / ``from_dict`` round-trip, and a bad value is refused by name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest

from crux_devtools.core.record.replay_overrides import Overrides, form_name, wire_fields

PANEL = Path(__file__).resolve().parents[3] / "templates" / "_replay_panel.html"


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


def test_every_override_has_its_cli_option_and_its_form_input() -> None:
    # the planner and the web form's reading follow from the field; the option and the input are written by hand
    from crux_devtools.cli.replay import replay

    options = {opt for p in replay.params if isinstance(p, click.Option) for opt in p.opts}
    inputs = set(re.findall(r'name="([a-z_]+)[":]', PANEL.read_text(encoding="utf-8")))
    for f in wire_fields():
        assert "--" + form_name(f).replace("_", "-") in options, f"add the option --{form_name(f).replace('_', '-')} of override {f.name!r} to cli/replay.py"
        assert form_name(f) in inputs, f"add an input named {form_name(f)!r} (override {f.name!r}) to {PANEL.name}'s form"


def test_an_override_is_planned_in_place_of_the_input_its_apply_names() -> None:
    recorded = {"model": "recorded", "budget": {"optimize_at": 100, "max": 200}, "rungs": (), "drop": ()}
    inputs, replaced = Overrides(max=300, model="other", drop=("notes",)).applied(recorded)
    assert inputs == {"model": "other", "budget": {"optimize_at": 100, "max": 300}, "rungs": (), "drop": ("notes",)}
    assert replaced == {"budget.max": 300, "model": "other", "drop": ("notes",)}
    assert Overrides(optimize_at=50).applied({**recorded, "budget": None})[0]["budget"] == {"optimize_at": 50}
    assert Overrides().applied(recorded) == (recorded, {})
    with pytest.raises(KeyError, match="override 'model' replaces 'model', which is not one of the recorded inputs"):
        Overrides(model="other").applied({"budget": None})
