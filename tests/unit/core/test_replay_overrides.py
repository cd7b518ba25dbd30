"""``Overrides`` has one wire form: ``to_dict`` / ``from_dict`` round-trip, and a bad value is refused by name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from crux_devtools.core.record.replay_overrides import Overrides, wire_fields


def test_every_override_survives_the_json_round_trip() -> None:
    full = Overrides(max=2000, optimize_at=1500, model="nimbus-local", rungs=(("catalog", "summary"), ("log", "offload")), drop=("house-rules", "examples"))
    wire = json.loads(json.dumps(full.to_dict()))
    assert Overrides.from_dict(wire) == full
    assert wire == {"max": 2000, "optimize_at": 1500, "model": "nimbus-local", "rungs": {"catalog": "summary", "log": "offload"}, "drop": ["house-rules", "examples"]}
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
        ({"budget": 10}, "unknown override 'budget'; the overrides are: max, optimize_at, model, rungs, drop"),
        (["max", 10], "overrides must be an object of override: value, got list"),
    ],
)
def test_a_bad_value_is_refused_with_what_it_must_be(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        Overrides.from_dict(data)
