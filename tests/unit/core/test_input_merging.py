"""The merged input model: one pydantic model with the prompt's fields and every reachable context's."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ValidationError

from crux_devtools import InputValidationError, RequestCompositionError, context, match, prompt, when


class Message(BaseModel):
    message: str


class Brand(BaseModel):
    brand_voice: str


class Account(BaseModel):
    user_id: str


class Mode(BaseModel):
    mode: Literal["draft", "review"]


def test_prompt_and_context_fields_merge_into_one_model():
    p = prompt("p", input=Message, use=[context("acct", input=Account)])
    schema = p.input_model.model_json_schema()
    assert set(schema["properties"]) == {"message", "user_id"}
    assert set(schema["required"]) == {"message", "user_id"}


def test_fields_of_a_context_with_its_own_when_become_optional():
    brand = context("brand", input=Brand, when=lambda i: bool(i.brand_voice))
    p = prompt("p", input=Message, use=[brand])
    model = p.input_model.model_validate({"message": "hi"})
    assert model.brand_voice is None
    assert p.input_model.model_json_schema()["required"] == ["message"]


@pytest.mark.parametrize(
    "wrap",
    [
        lambda c: when(lambda i: True, c),
        lambda c: match(lambda i: "a", {"a": c}),
        lambda c: context("gate", when=lambda i: True, use=[c]),
    ],
    ids=["when-wrapper", "match-branch", "nested-under-conditional"],
)
def test_fields_that_may_be_excluded_at_runtime_are_optional(wrap):
    p = prompt("p", input=Message, use=[wrap(context("acct", input=Account))])
    assert p.input_model.model_validate({"message": "x"}).user_id is None


def test_a_field_required_by_an_unconditional_owner_stays_required():
    p = prompt("p", use=[when(lambda i: True, context("a", input=Account)), context("b", input=Account)])
    with pytest.raises(ValidationError):
        p.input_model.model_validate({})


def test_same_field_with_incompatible_types_is_an_invalid_composition():
    class Other(BaseModel):
        user_id: int

    with pytest.raises(RequestCompositionError) as info:
        prompt("p", use=[context("a", input=Account), context("b", input=Other)])
    assert info.value.code == "INVALID_COMPOSITION"
    message = str(info.value)
    assert "'user_id'" in message and "'a'" in message and "'b'" in message


def test_same_field_optional_in_one_place_and_required_in_another_is_compatible():
    class MaybeAccount(BaseModel):
        user_id: str | None = None

    p = prompt("p", use=[context("a", input=MaybeAccount), context("b", input=Account)])
    assert "user_id" in p.input_model.model_json_schema()["required"]


def test_input_accepts_a_dict_or_an_instance_of_the_merged_model():
    p = prompt("p", input=Message, system=lambda i: f"Hi {i.message}")
    assert p.resolve({"message": "a"}).system == "Hi a"
    assert p.resolve(p.input_model(message="b")).system == "Hi b"


def test_unknown_input_fields_are_rejected():
    p = prompt("p", input=Message)
    with pytest.raises(ValidationError, match="nope"):
        p.resolve({"message": "a", "nope": 1})


def test_input_of_the_wrong_type_names_the_prompt():
    p = prompt("p", input=Message)
    with pytest.raises(TypeError, match="prompt 'p': input must be a dict"):
        p.resolve(["message"])


class Ticket(BaseModel):
    message: str
    count: int = 1


def test_a_misspelt_field_is_one_readable_line_with_a_suggestion():
    p = prompt("p", input=Ticket)
    with pytest.raises(InputValidationError) as info:
        p.resolve({"mesage": "hi"})
    assert info.value.problems == ("unknown field 'mesage' (did you mean 'message'?)", "missing required field 'message'")
    assert str(info.value) == (
        "prompt 'p': invalid input\n  unknown field 'mesage' (did you mean 'message'?)\n  missing required field 'message'"
    )
    assert "errors.pydantic.dev" not in str(info.value) and "errors.pydantic.dev" not in repr(info.value)


def test_an_input_error_is_still_a_pydantic_validation_error_with_its_structured_errors():
    p = prompt("p", input=Ticket)
    with pytest.raises(ValidationError) as info:
        p.resolve({"message": "hi", "count": "abc"})
    assert isinstance(info.value, InputValidationError) and isinstance(info.value, ValueError)
    assert str(info.value) == "prompt 'p': invalid input: field 'count': expected an integer, got 'abc'"
    assert [(e["type"], e["loc"]) for e in info.value.errors()] == [("int_parsing", ("count",))]


def test_input_problems_name_nested_fields_list_items_and_every_choice():
    class Address(BaseModel):
        street: str
        city: str

    class Order(BaseModel):
        mode: Literal["draft", "review"] = "draft"
        either: int | str | None = None
        address: Address | None = None
        items: list[int] = []

    p = prompt("p", input=Order)
    with pytest.raises(InputValidationError) as info:
        p.resolve({"mode": "final", "either": [1], "address": {"stret": "Main", "city": "X"}, "items": [1, "two"], "zzz": 1})
    assert info.value.problems == (
        "unknown field 'zzz'; known fields: mode, either, address, items",
        "field 'mode': expected 'draft' or 'review', got 'final'",
        "field 'either': expected an integer or a string, got [1]",
        "missing required field 'address.street'",
        "field 'items[1]': expected an integer, got 'two'",
    )


def test_a_deep_or_odd_input_value_is_shown_short():
    p = prompt("p", input=Ticket)
    deep: object = "end"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(InputValidationError) as info:
        p.resolve({"message": deep})
    (line,) = info.value.problems
    assert line.startswith("field 'message': expected a string, got [[") and len(line) < 120
    with pytest.raises(InputValidationError) as info:
        p.resolve({"message": "ok", "count": "x\ud800"})
    assert info.value.problems == ("field 'count': expected valid Unicode text (no lone surrogates), got 'x\\ud800'",)
    info.value.problems[0].encode("utf-8")  # shown as an escape, so it can be printed and sent


def test_an_input_error_survives_pickling_with_its_readable_message():
    import pickle

    p = prompt("p", input=Ticket)
    with pytest.raises(InputValidationError) as info:
        p.resolve({"mesage": "hi"})
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is InputValidationError and str(again) == str(info.value)
