"""Every field of a ``LoadError`` goes out in ``to_dict`` and comes back in ``from_dict``: a field
added to the dataclass and its shape travels both ways, or this fails naming it."""

from __future__ import annotations

import dataclasses
from typing import Any, get_type_hints

from crux_devtools.inspector.errors import LoadError
from crux_devtools.shapes import LoadErrorDict


def filled() -> LoadError:
    """A load error whose every field holds a value of its own, none its default."""
    hints = get_type_hints(LoadError)
    values: dict[str, Any] = {}
    for number, field in enumerate(dataclasses.fields(LoadError), start=1):
        values[field.name] = 10 + number if hints[field.name] in (int, int | None) else f"the {field.name}"
    return LoadError(**values)


def test_every_field_of_a_load_error_comes_back_from_its_dict() -> None:
    error = filled()
    back = LoadError.from_dict(error.to_dict())
    lost = [f.name for f in dataclasses.fields(LoadError) if getattr(back, f.name) != getattr(error, f.name)]
    assert lost == [], f"these fields do not travel through to_dict/from_dict: {lost}"
    assert back == error


def test_the_dict_holds_every_key_of_the_shape() -> None:
    assert set(filled().to_dict()) == set(get_type_hints(LoadErrorDict))
