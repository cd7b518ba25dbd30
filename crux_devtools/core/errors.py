"""Every error the library raises on purpose, in one module.

Expected outcomes (an excluded or dropped context) are data in an ``Inspection``; only real faults
raise. Catch ``CruxError`` for all of them, or one branch of the tree::

    CruxError
    ├── RequestCompositionError      code: INVALID_COMPOSITION | REQUEST_TOO_LARGE | REPRESENTATION_UNAVAILABLE
    ├── RunError                     a generate run failed: its model, a tool, or max_steps
    ├── ReplayError                  a recorded step cannot be replayed as asked (also a ValueError)
    │   └── DamagedRunError          a text the step's recording refers to is missing from the file
    ├── CallbackError                a user callback raised or returned the wrong type
    ├── ModelError                   kind: transport | http | timeout | malformed | exhausted
    ├── SummaryError                 a summary model failed or answered without text
    ├── OffloadError                 an offloaded value cannot be stored or read
    ├── MemoryStoreError             the memory database cannot be used
    ├── RunStoreError                the runs database cannot be used
    └── InputValidationError         an input does not fit a prompt's input model

``InputValidationError`` is also a ``pydantic.ValidationError``, so it is defined in
``validation.py`` (this module stays importable without pydantic: the inspector's light session
process reads the runs store through it). Every other class is defined here; the modules that raise
them (``models``, ``summaries``, ``offload_store``, ``memory.store``, ``runstore``) re-import them.
``tests/unit/core/test_errors.py`` checks this drawing against the real class hierarchy.

Outside the tree: a wrong argument to a public function (a wrong type, an unknown option) raises the
built-in ``TypeError`` or ``ValueError`` with a message saying what to pass, and the inspector's
own faults (a worker that died, a malformed worker report) are its own classes, translated at its
edge into an error panel or a CLI message.

Every error pickles with its attributes (``kind``, ``code``, ``path``, ...), so it survives a trip
through ``multiprocessing`` or ``concurrent.futures`` (a ``result`` holding what cannot be pickled,
such as a tool defined by a lambda, is left out of the copy).

``generate`` has one failure story: it returns only with the model's text; every failure raises,
and the error a run raised carries the run so far as ``result`` (a ``GenerateResult`` with
``text=None``: every step made, the failing one last with its ``error``) and ``steps``.
"""

from __future__ import annotations

import functools
import traceback as _traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from crux_devtools.shapes import DiagnosticDict, ErrorInfoDict, PlanErrorDict

CompositionCode = Literal["REQUEST_TOO_LARGE", "INVALID_COMPOSITION", "REPRESENTATION_UNAVAILABLE"]
COMPOSITION_CODES: tuple[CompositionCode, ...] = get_args(CompositionCode)

ModelErrorKind = Literal["transport", "http", "timeout", "malformed", "exhausted"]
"""Why a model could not answer; the one definition of the names (``MODEL_ERROR_KINDS`` is derived):

- ``"transport"``: the server could not be reached (connection refused, DNS, TLS, reset);
- ``"http"``: the server answered with an error status (``ModelError.status`` holds it);
- ``"timeout"``: no answer within the adapter's timeout;
- ``"malformed"``: an answer came back but is not one (not the provider's format, no text and no
  tool calls, or tool-call arguments that are not a JSON object);
- ``"exhausted"``: the adapter has nothing left to answer with (a ``ScriptedModel``, or a replay of
  recorded answers, past its last answer).
"""
MODEL_ERROR_KINDS: tuple[ModelErrorKind, ...] = get_args(ModelErrorKind)


class CruxError(Exception):
    """Base class of every error the library raises on purpose."""

    result: Any = None
    """The partial ``GenerateResult`` of the ``generate``/``agenerate`` run this error ended (the
    steps made so far, ``text=None``), or ``None`` for an error no run raised."""

    @property
    def steps(self) -> list[Any]:
        """The steps the run made before this error (``result.steps``; empty outside a run)."""
        return list(self.result.steps) if self.result is not None else []

    def __reduce__(self) -> Any:
        # The default unpickles with ``cls(*args)``, which fails for a subclass whose constructor
        # takes other arguments (``ModelError``'s required ``kind=``, ``RunStoreError(path, message)``).
        state = dict(self.__dict__)
        if state.get("result") is not None:
            import pickle

            try:
                pickle.dumps(state["result"])
            except Exception:  # noqa: BLE001 - e.g. a tool defined by a lambda: the copy goes without it
                state["result"] = None
        return _restore, (type(self), self.args, state)


def _restore(cls: type[CruxError], args: tuple[Any, ...], state: dict[str, Any]) -> CruxError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding behind a composition error. Never holds contributor content, only ids and counts."""

    id: str
    code: str
    contributor: str | None
    tokens: int | None
    message: str

    def to_dict(self) -> DiagnosticDict:
        return {"id": self.id, "code": self.code, "contributor": self.contributor, "tokens": self.tokens, "message": self.message}


class RequestCompositionError(CruxError):
    """A prompt or request cannot be composed: bad definition, nothing fits, or a rung is missing."""

    def __init__(
        self,
        code: CompositionCode,
        message: str,
        *,
        diagnostics: list[Diagnostic] | None = None,
        request_id: str | None = None,
    ) -> None:
        if code not in COMPOSITION_CODES:
            raise ValueError(f"unknown composition code {code!r}; expected one of {', '.join(COMPOSITION_CODES)}")
        super().__init__(f"{code}: {message}")
        self.code: CompositionCode = code
        self.diagnostics: list[Diagnostic] = list(diagnostics or [])
        self.request_id = request_id

    def to_dict(self) -> PlanErrorDict:
        return {
            "code": self.code,
            "message": str(self),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "request_id": self.request_id,
        }


def invalid_composition(message: str, *, contributor: str | None = None) -> RequestCompositionError:
    """Shorthand for the most common definition-time error."""
    diagnostic = Diagnostic(id="composition", code="INVALID_COMPOSITION", contributor=contributor, tokens=None, message=message)
    return RequestCompositionError("INVALID_COMPOSITION", message, diagnostics=[diagnostic])


class CallbackError(CruxError):
    """A user callback (``system``, ``prompt``, ``when``, ``match(on=...)``, a memory's ``query``, ...) failed.

    The message names the owner (context or prompt id) and which callback; the original exception,
    if any, is kept as ``__cause__``. ``function``, when given, is the callback itself, and
    ``location`` where it is defined: the place to look when it returned a wrong value, which
    leaves no frame of the user's code in the traceback.
    """

    def __init__(self, owner: str, callback: str, message: str, *, function: Callable[..., Any] | None = None) -> None:
        super().__init__(f"{owner!r}: {callback} callback {message}")
        self.owner = owner
        self.callback = callback
        self.function = function

    @property
    def location(self) -> tuple[str, int] | None:
        """``(file, first line)`` of ``function``'s definition, if it has Python code."""
        return defined_at(self.function)


def defined_at(function: Any) -> tuple[str, int] | None:
    """Where a callable's Python code starts: through ``functools.partial``, ``functools.wraps``
    and bound methods, and ``__call__`` of a callable object. ``None`` for builtins and the like."""
    seen: set[int] = set()
    while function is not None and id(function) not in seen:
        seen.add(id(function))
        code = getattr(function, "__code__", None)
        if code is not None:
            return code.co_filename, code.co_firstlineno
        if isinstance(function, functools.partial):
            function = function.func
        elif hasattr(function, "__wrapped__"):
            function = function.__wrapped__
        elif hasattr(function, "__func__"):
            function = function.__func__
        elif not isinstance(function, type) and callable(function):
            function = getattr(type(function), "__call__", None)
        else:
            return None
    return None


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A fault recorded as data (a step's ``error``, a run's ``error``): what went wrong, and where.

    ``type`` is the exception's class name (or a short name for a fault that is not an exception,
    such as ``"UnknownTool"``); ``traceback`` is the formatted traceback, or ``None``.
    """

    type: str
    message: str
    traceback: str | None = None

    @classmethod
    def from_exception(cls, exc: BaseException, message: str | None = None) -> ErrorInfo:
        text = "".join(_traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(type=type(exc).__name__, message=message if message is not None else str(exc), traceback=text)

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> ErrorInfoDict:
        return {"type": self.type, "message": self.message, "traceback": self.traceback}


class RunError(CruxError):
    """A ``generate`` run failed at a step: the model failed or answered malformed, asked for an
    unknown tool, a tool raised or was called with invalid arguments (unless the tool was declared
    with ``on_error="tell_model"``), or ``max_steps`` passed without a text answer.

    ``error`` is the fault as data (also the failing step's ``error`` and ``result.error``: its
    ``type`` names the original exception, e.g. ``ModelError``); ``stop_reason`` is ``"error"`` or
    ``"max_steps"``; ``result`` holds every step so far; ``__cause__`` is the original exception,
    when there is one.
    """

    def __init__(self, error: ErrorInfo, result: Any = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.result = result

    @property
    def stop_reason(self) -> str:
        return str(getattr(self.result, "stop_reason", "error"))


class ReplayError(CruxError, ValueError):
    """A step cannot be replayed as asked: unknown run or step, no plan inputs kept, a bad override."""


class ModelError(CruxError):
    """A model could not produce an answer; ``kind`` (required) is one of ``MODEL_ERROR_KINDS``.

    ``status`` is the HTTP status for ``kind="http"``, else ``None``; ``model`` names the adapter.
    An adapter raises it for every fault on the way to or from its provider (see docs/models.md).
    """

    def __init__(self, message: str, *, kind: ModelErrorKind, status: int | None = None, model: str | None = None) -> None:
        if kind not in MODEL_ERROR_KINDS:
            raise ValueError(f"unknown model error kind {kind!r}; expected one of {', '.join(MODEL_ERROR_KINDS)}")
        super().__init__(message)
        self.kind: ModelErrorKind = kind
        self.status = status
        self.model = model

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": str(self), "status": self.status, "model": self.model}


class SummaryError(CruxError):
    """A summary could not be produced (the summary model failed or answered without text)."""


class OffloadError(CruxError):
    """An offloaded value cannot be stored or read (unknown handle, wrong namespace, bad range)."""


class MemoryStoreError(CruxError):
    """The memory database cannot be used: corrupt, locked, unreadable or from a newer release."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"memory store {path!r}: {message}")
        self.path = path


class RunStoreError(CruxError):
    """The runs database cannot be used: corrupt, locked, unwritable or from a newer release."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"runs store {path!r}: {message}")
        self.path = path


class DamagedRunError(ReplayError):
    """A recorded run's data is incomplete in the store (a text its step's plan inputs refer to is
    missing): names the file, the run and the step, so the one damaged run is known and the others
    still replay."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"runs store {path!r}: {message}")
        self.path = path
