"""The merged input model: one pydantic model with the prompt's fields and every reachable context's."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ValidationError

from crux_devtools import RequestCompositionError, context, match, prompt, when


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
