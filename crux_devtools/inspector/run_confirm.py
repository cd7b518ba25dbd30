"""Whether a Run may call its model: decided in the worker, against the model that will run.

A model that is not a ``ScriptedModel`` costs money and runs real tools, so the user confirms it
first. The front ends cannot decide this from the report they show: a save may have replaced the
agent (a scripted model by a real one) while the Run was on its way. So the worker's ``run`` op
decides, with the model it is about to call: a real model runs only when the request carries the
confirmation *of that model* (its ``token``, handed out with the question, or ``True`` for an
explicit command-line run). Otherwise the op answers with a confirmation request, the front end
asks, and sends the Run again with the token of the model the user agreed to. If the model changed
again in between, the tokens differ and it asks again.

This module imports nothing heavy: the web and TUI processes read ``asks_confirmation`` answers.
"""

from __future__ import annotations

import hashlib
from typing import Any

NEEDS = "needs_confirmation"


def model_token(model: Any) -> str:
    """A short fingerprint of a model adapter: its class, name and plain settings (endpoint, model
    id, ...). The same configuration after a re-import gives the same token; a different model gives
    another."""
    from ..core.plan.budget import model_name_of

    cls = type(model)
    settings: list[tuple[str, str]] = []
    try:
        attributes = vars(model)
    except TypeError:  # a class with __slots__ and no __dict__
        attributes = {}
    for key, value in sorted(attributes.items()):
        if isinstance(value, (str, int, float, bool)) or value is None:
            settings.append((key, repr(value)))
    text = repr((cls.__module__, cls.__qualname__, model_name_of(model), settings))
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]


def confirmation_request(target_id: str, kind: str, model_name: str | None, token: str) -> dict[str, Any]:
    """The ``run`` op's answer when the model needs the user's go-ahead: nothing ran."""
    return {NEEDS: True, "target": target_id, "kind": kind, "model": model_name, "model_kind": "real", "confirm": token}


def check_run(target: Any, confirm: Any) -> dict[str, Any] | None:
    """In the worker, just before a Run: ``None`` when it may go ahead (a scripted model, no model,
    or a confirmation of this very model), else the confirmation request to answer with."""
    from ..core.plan.budget import model_name_of
    from .evaluate import model_kind, runnable_model

    if model_kind(target) != "real":
        return None
    model = runnable_model(target)
    token = model_token(model)
    if confirm is True or (isinstance(confirm, str) and confirm == token):
        return None
    return confirmation_request(target.id, target.kind, model_name_of(model), token)


def asks_confirmation(result: Any) -> bool:
    """Whether a ``run`` answer is a confirmation request (nothing ran) rather than a run."""
    return isinstance(result, dict) and result.get(NEEDS) is True
