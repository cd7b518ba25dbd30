"""Merging the input models of a prompt and every context it reaches into one pydantic model."""

from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.fields import FieldInfo

from ..errors import invalid_composition


@dataclass(slots=True)
class FieldDecl:
    """One declaration of an input field, and whether its owner may be excluded at runtime."""

    name: str
    owner: str
    model: type[BaseModel]
    info: FieldInfo
    conditional: bool


def strip_optional(annotation: Any) -> Any:
    """``str | None`` -> ``str``; other annotations unchanged."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = tuple(a for a in typing.get_args(annotation) if a is not type(None))
        if len(args) == 1:
            return args[0]
        return typing.Union[args]  # noqa: UP007 - rebuilt from parts
    return annotation


def _describe(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or repr(annotation).replace("typing.", "")


def model_name(id: str) -> str:
    words = re.split(r"[^0-9A-Za-z]+", id)
    name = "".join(w[:1].upper() + w[1:] for w in words if w) or "Prompt"
    if name[0].isdigit():
        name = "P" + name
    return f"{name}Input"


def merge_fields(prompt_id: str, decls: list[FieldDecl]) -> type[BaseModel]:
    """Build the merged model. A field is required only where some unconditional owner requires it."""
    by_name: dict[str, list[FieldDecl]] = {}
    for decl in decls:
        by_name.setdefault(decl.name, []).append(decl)
    fields: dict[str, Any] = {}
    for name, group in by_name.items():
        first = group[0]
        base = strip_optional(first.info.annotation)
        for other in group[1:]:
            other_base = strip_optional(other.info.annotation)
            if other_base != base:
                raise invalid_composition(
                    f"prompt {prompt_id!r}: input field {name!r} is {_describe(base)} in {first.owner!r} "
                    f"but {_describe(other_base)} in {other.owner!r}; give both the same type or rename one",
                    contributor=other.owner,
                )
        required = [d for d in group if not d.conditional and d.info.is_required()]
        if required:
            chosen = required[0]
            fields[name] = (chosen.info.annotation, chosen.info)
            continue
        unconditional = [d for d in group if not d.conditional]
        chosen = unconditional[0] if unconditional else first
        if chosen.info.is_required():
            info = FieldInfo.merge_field_infos(chosen.info, default=None)
            fields[name] = (base | None if isinstance(base, type) else typing.Optional[base], info)  # noqa: UP007
        else:
            fields[name] = (chosen.info.annotation, chosen.info)
    return create_model(  # type: ignore[call-overload]
        model_name(prompt_id),
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )
