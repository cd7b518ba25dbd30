"""Errors raised by the core.

Expected outcomes (an excluded or dropped context) are data in an ``Inspection``; only real faults
raise. The tree::

    CruxError
    ├── RequestCompositionError      code: INVALID_COMPOSITION | REQUEST_TOO_LARGE | REPRESENTATION_UNAVAILABLE
    └── CallbackError                a user callback raised or returned the wrong type
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

CompositionCode = Literal["REQUEST_TOO_LARGE", "INVALID_COMPOSITION", "REPRESENTATION_UNAVAILABLE"]
COMPOSITION_CODES: tuple[str, ...] = ("REQUEST_TOO_LARGE", "INVALID_COMPOSITION", "REPRESENTATION_UNAVAILABLE")


class CruxError(Exception):
    """Base class of every error the library raises on purpose."""


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding behind a composition error. Never holds contributor content, only ids and counts."""

    id: str
    code: str
    contributor: str | None
    tokens: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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

    def to_dict(self) -> dict[str, Any]:
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
    """A user callback (``system``, ``prompt``, ``when``, ``match(on=...)``, ...) failed.

    The message names the owner (context or prompt id) and which callback; the original exception,
    if any, is kept as ``__cause__``. ``function`` is the callback itself when known, so a tool can
    point at its definition when it returned the wrong type (no traceback reaches user code then).
    """

    def __init__(self, owner: str, callback: str, message: str) -> None:
        super().__init__(f"{owner!r}: {callback} callback {message}")
        self.owner = owner
        self.callback = callback
        self.function: Any = None
