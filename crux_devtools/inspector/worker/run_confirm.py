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
    from ...core.plan.budget import model_name_of

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


def confirmation_request(target_id: str, kind: str, model_name: str | None, token: str, input_tokens: int | None = None,
                         model_kind: str = "real") -> dict[str, Any]:
    """The answer of a worker op that would call a model needing the user's go-ahead: nothing ran.
    ``model`` is the name of the model the op would call, ``input_tokens`` the size of its first
    request (``None`` when it could not be planned): the front ends price the question with both
    (``run_costs.Prices.estimate``), so the cost shown is the cost of the model the token allows."""
    return {NEEDS: True, "target": target_id, "kind": kind, "model": model_name, "model_kind": model_kind, "confirm": token,
            "input_tokens": input_tokens}


def check_call(target: Any, confirm: Any, input_tokens: Any = None, *, ask: bool = False) -> dict[str, Any] | None:
    """In the worker, just before calling the target's model: ``None`` when it may go ahead (a
    scripted model, no model, or a confirmation of this very model), else the confirmation request
    to answer with. ``input_tokens``: a number, or a function giving it (only called when asking).
    ``ask``: answer the question whatever the model is (a front end pricing a send before it is
    pressed); the token of a scripted model is never needed to call it."""
    from ...core.plan.budget import model_name_of
    from .evaluate import model_kind, runnable_model

    kind = model_kind(target)
    if kind is None or (kind != "real" and not ask):
        return None
    model = runnable_model(target)
    token = model_token(model)
    if not ask and (confirm is True or (isinstance(confirm, str) and confirm == token)):
        return None
    tokens = input_tokens() if callable(input_tokens) else input_tokens
    return confirmation_request(target.id, target.kind, model_name_of(model), token, tokens if isinstance(tokens, int) else None, kind)


def check_run(target: Any, confirm: Any, input_tokens: Any = None) -> dict[str, Any] | None:
    """``check_call`` for a Run (the ``run`` op)."""
    return check_call(target, confirm, input_tokens)


def asks_confirmation(result: Any) -> bool:
    """Whether a ``run`` answer is a confirmation request (nothing ran) rather than a run."""
    return isinstance(result, dict) and result.get(NEEDS) is True
