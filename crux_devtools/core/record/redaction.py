"""Removing a value from a recorded run wherever it occurs, for ``record_runs(redact=...)``.

A value given to a run does not stay in its input: the prompt's callbacks put it into the system
text and the messages of every step's ``sent`` request, tools get it in their arguments and return
it in their results, the model quotes it in its answer, an error message or traceback may repeat
it. Blanking ``run["input"]["card"]`` leaves every other copy. ``scrub`` walks the whole run (every
string, dict key and nested container) and masks each occurrence; ``redact_values`` makes the
``redact`` function ``record_runs`` takes from fixed values and from input fields read per run.

A value is masked as written and as it appears inside JSON text (a tool result shown to the model
as JSON, with its quotes or non-ASCII characters escaped). The default mask has the length of what
it covers (``*`` repeated), so each step's ``contributions[].span`` still points at the right part
of ``sent.system``; lengths, token counts and byte sizes are kept, so they still tell how long the
value was.

A value shorter than ``MIN_INSIDE`` characters (a CVC, a PIN digit) is masked wherever it stands
as a word of its own, no letter, digit or ``_`` touching it: ``737`` goes from "CVC 737" and from
``{"cvc": "737"}``, not from "7371" or "a737". A number equal to a value is masked where the
application's data sits as it was (``DATA_KEYS``: the input, tool call arguments, tool outputs,
the provider's answer); the recorder's own counts elsewhere are kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

Redact = Callable[[dict[str, Any]], dict[str, Any]]


def _forms(value: str) -> list[str]:
    """``value`` as written and as JSON text shows it (escaped), longest first."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    return sorted((f for f in forms if f), key=len, reverse=True)


MIN_INSIDE = 4  # a shorter value ("737", "7") is masked only where it stands as a word of its own
# Keys the recorder fills with its own identifiers and labels, never with a value of the run's input
# (outside the places that hold the application's data, ``DATA_KEYS``, where every key is data).
STRUCTURAL_KEYS = frozenset({"id", "started_at", "previous_request_id", "handle", "kind", "origin", "status", "representation", "measurement", "tier", "model"})
# Where the application's own values sit as they were (numbers included): the run's input, a tool
# call's arguments, a tool's output, the provider's own answer. A number there equal to a value
# (an input field ``cvc = 737``) is masked too; elsewhere numbers are the recorder's counts.
DATA_KEYS = frozenset({"input", "arguments", "output", "provider_response"})


def _masker(values: Iterable[str], replacement: str | None) -> Callable[[str], str]:
    """One function masking every occurrence of each value: a value of ``MIN_INSIDE`` characters
    or more wherever it occurs, a shorter one where no letter, digit or ``_`` touches it (so ``737``
    goes from "CVC 737" but not from "7371", and ``7`` from "code 7" but not from "v7")."""
    forms = sorted({(form, len(value) < MIN_INSIDE) for value in values for form in _forms(value)}, key=lambda f: len(f[0]), reverse=True)
    pattern = re.compile("|".join(rf"(?<!\w){re.escape(f)}(?!\w)" if short else re.escape(f) for f, short in forms))

    def cover(match: re.Match[str]) -> str:
        return replacement if replacement is not None else "*" * len(match.group())

    def mask(text: str) -> str:
        return pattern.sub(cover, text)

    return mask


def _walk(value: Any, mask: Callable[[str], str], numbers: frozenset[str], data: bool = False) -> Any:
    """``value`` with every string masked; inside ``DATA_KEYS`` (``data``) a number whose text is
    one of ``numbers`` is masked too, and no key is taken for the recorder's own."""
    if isinstance(value, str):
        return mask(value)
    if data and isinstance(value, (int, float)) and not isinstance(value, bool) and str(value) in numbers:
        return mask(str(value))
    if isinstance(value, dict):
        return {
            (mask(k) if isinstance(k, str) else k): (
                v if not data and k in STRUCTURAL_KEYS and isinstance(v, str) else _walk(v, mask, numbers, data or k in DATA_KEYS)
            )
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_walk(v, mask, numbers, data) for v in value]
    return value


def _check_values(values: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for value in values:
        if not isinstance(value, str) or not value:
            raise TypeError(f"a value to redact must be a non-empty string, got {value!r}")
        out.append(value)
    return out


def scrub(run: dict[str, Any], values: Iterable[str], *, replacement: str | None = None) -> dict[str, Any]:
    """A copy of ``run`` with every occurrence of each of ``values`` masked, in every string of it
    (but the recorder's own identifiers, ``STRUCTURAL_KEYS``). A value shorter than ``MIN_INSIDE``
    characters is masked wherever it stands as a word of its own (no letter, digit or ``_`` on
    either side): ``"737"`` in "CVC 737", never in "7371".

    ``replacement=None`` masks with ``*`` of the same length (spans stay exact); a string replaces
    each occurrence with that text instead (spans after it then shift).
    """
    wanted = _check_values(values)
    if not wanted:
        return run
    return _walk(run, _masker(wanted, replacement), frozenset(wanted))  # type: ignore[no-any-return]


def _field_values(data: Any, path: str) -> list[str]:
    """The string leaves at a dotted ``path`` of a run's input (numbers as their text)."""
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            return []
        data = data[key]
    leaves: list[str] = []

    def collect(value: Any) -> None:
        if isinstance(value, str):
            if value:
                leaves.append(value)
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, (int, float)):
            leaves.append(str(value))
        elif isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                collect(v)

    collect(data)
    return leaves


def redact_values(*values: str, input_fields: Sequence[str] = (), replacement: str | None = None) -> Redact:
    """A ``redact`` function for ``record_runs``: masks each of ``values`` and, per run, the value of
    each field named in ``input_fields`` (a field of the run's input; ``"customer.email"`` for a
    nested one; every string in a list or dict), wherever it occurs in the run.

    ``record_runs(".", redact=redact_values(API_KEY, input_fields=["card_number"]))``.
    """
    fixed = _check_values(values)
    if isinstance(input_fields, str) or not all(isinstance(f, str) and f for f in input_fields):
        raise TypeError(f"input_fields must be a list of input field names, got {input_fields!r}")
    fields = list(input_fields)

    def redact(run: dict[str, Any]) -> dict[str, Any]:
        found = [v for f in fields for v in _field_values(run.get("input"), f)]
        return scrub(run, fixed + found, replacement=replacement)

    return redact


__all__ = ["redact_values", "scrub"]
