"""What crosses the worker boundary, checked in the server's process before anything reads it.

The worker runs user code, and user code can replace the inspector's own functions inside the
worker (monkeypatching). So nothing a worker sends is trusted: every progress event, prompt report
and load error is checked here against the shape the front ends read (``api.py``), and a malformed
one becomes a load error instead of a ``KeyError`` somewhere in the web page, the TUI or ``check``.

Progress events (worker -> session, while a ``load`` runs; each resets the step's deadline)::

    {"event": "import", "module": name}                      about to import a module
    {"event": "imported", "module": name, "file", "error"}   done (error: a LoadError or null)
    {"event": "target", "target": id, "kind", "module", "file", "line"}  about to evaluate a prompt or agent
    {"event": "example", "target": id, "example": name}      about to evaluate one of its examples
    {"event": "report", "target": id, "prompt", "error"}     its PromptReport (or the error that stopped it)
    {"event": "exit", "code": int, "file", "line"}           user code called os._exit here
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import LoadError
from .report_types import ExampleReport, LoadErrorDict, PlanErrorDict, PromptReport


class MalformedReport(ValueError):
    """A value sent by a worker does not have the shape the front ends read."""


Checker = Callable[[Any, str], None]


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _of(*types: type, nullable: bool = False) -> Checker:
    def check(value: Any, where: str) -> None:
        if value is None and nullable:
            return
        if isinstance(value, bool) and bool not in types:
            raise MalformedReport(f"{where} is {_type_name(value)}, expected {'/'.join(t.__name__ for t in types)}")
        if not isinstance(value, types):
            raise MalformedReport(f"{where} is {_type_name(value)}, expected {'/'.join(t.__name__ for t in types)}")

    return check


def _record(fields: Mapping[str, Checker], *, nullable: bool = False) -> Checker:
    def check(value: Any, where: str) -> None:
        if value is None and nullable:
            return
        if not isinstance(value, dict):
            raise MalformedReport(f"{where} is {_type_name(value)}, expected an object")
        for key, field_check in fields.items():
            if key not in value:
                raise MalformedReport(f"{where} has no {key!r}")
            field_check(value[key], f"{where}.{key}")

    return check


def _list(item: Checker) -> Checker:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise MalformedReport(f"{where} is {_type_name(value)}, expected a list")
        for i, element in enumerate(value):
            item(element, f"{where}[{i}]")

    return check


STR, INT, BOOL, DICT = _of(str), _of(int), _of(bool), _of(dict)
OPT_STR, OPT_INT = _of(str, nullable=True), _of(int, nullable=True)
NUMBER = _of(int, float)

LOAD_ERROR_FIELDS: dict[str, Checker] = {"file": OPT_STR, "line": OPT_INT, "type": STR, "message": STR, "traceback": STR}
LOAD_ERROR = _record(LOAD_ERROR_FIELDS)
PLAN_ERROR = _record({"code": STR, "message": STR, "diagnostics": _list(DICT), "request_id": OPT_STR}, nullable=True)
PART = _record({"source": STR, "kind": STR, "status": STR, "tokens": INT, "text": OPT_STR})
INSPECTION = _record(
    {
        "system": STR,
        "prompt": OPT_STR,
        "parts": _list(PART),
        "excluded_contexts": _list(_record({"id": STR, "reason": STR})),
        "dropped_contexts": _list(_record({"id": STR, "reason": STR, "tokens": INT})),
        "tools": _list(STR),
        "token_budget": OPT_INT,
        "system_tokens": INT,
        "prompt_tokens": INT,
        "total_tokens": INT,
        "fits": BOOL,
    },
    nullable=True,
)
EXAMPLE = _record(
    {
        "name": STR,
        "input": DICT,
        "error": _record(LOAD_ERROR_FIELDS, nullable=True),
        "inspection": INSPECTION,
        "preview": _of(dict, nullable=True),
        "preview_error": PLAN_ERROR,
    }
)
PROMPT = _record(
    {
        "id": STR,
        "kind": STR,
        "module": STR,
        "file": STR,
        "line": OPT_INT,
        "input_schema": DICT,
        "contexts": _list(_record({"id": STR, "kind": STR})),
        "tools": _list(STR),
        "status": STR,
        "total_tokens": INT,
        "has_model": BOOL,
        "examples": _list(EXAMPLE),
    }
)
_PREVIEW_LISTS = ("adaptations", "candidates", "breakdown", "tools", "warnings", "diagnostics", "contributions")


def check_load_error(value: Any, where: str = "error") -> LoadErrorDict:
    """``value`` if it is a ``LoadErrorDict``, else ``MalformedReport``."""
    LOAD_ERROR(value, where)
    return value  # type: ignore[no-any-return]


def check_plan_error(value: Any, where: str = "preview_error") -> PlanErrorDict | None:
    """``value`` if it is a ``PlanErrorDict`` (or None), else ``MalformedReport``."""
    PLAN_ERROR(value, where)
    return value  # type: ignore[no-any-return]


def check_prompt(value: Any, where: str = "prompt") -> PromptReport:
    """``value`` if it is a PromptReport the front ends can read, else ``MalformedReport``."""
    PROMPT(value, where)
    for i, example in enumerate(value["examples"]):
        preview = example["preview"]
        for key in _PREVIEW_LISTS:
            if preview is not None and key in preview and not isinstance(preview[key], list | dict | type(None)):
                raise MalformedReport(f"{where}.examples[{i}].preview.{key} is {_type_name(preview[key])}")
    return value  # type: ignore[no-any-return]


def check_example(value: Any, where: str = "example") -> ExampleReport:
    """``value`` if it is an ExampleReport, else ``MalformedReport``."""
    EXAMPLE(value, where)
    return value  # type: ignore[no-any-return]


# -- progress events -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ImportStarted:
    module: str


@dataclass(frozen=True, slots=True)
class Imported:
    module: str
    file: str | None
    error: LoadErrorDict | None


@dataclass(frozen=True, slots=True)
class TargetStarted:
    target: str
    kind: str
    module: str
    file: str | None
    line: int | None


@dataclass(frozen=True, slots=True)
class ExampleStarted:
    target: str
    example: str


@dataclass(frozen=True, slots=True)
class TargetReported:
    """A target's report, or the error that stopped it (already checked)."""

    target: str
    prompt: PromptReport | None
    error: LoadErrorDict | None


@dataclass(frozen=True, slots=True)
class ExitCalled:
    """User code called ``os._exit(code)`` at ``file:line`` (the worker says so just before)."""

    code: int
    file: str | None
    line: int | None


Event = ImportStarted | Imported | TargetStarted | ExampleStarted | TargetReported | ExitCalled


def parse_event(message: dict[str, Any]) -> Event:
    """The typed event of a worker's progress line; ``MalformedReport`` if it is not one."""
    kind = message.get("event")
    if kind == "import":
        STR(message.get("module"), "import.module")
        return ImportStarted(message["module"])
    if kind == "imported":
        STR(message.get("module"), "imported.module")
        OPT_STR(message.get("file"), "imported.file")
        error = message.get("error")
        return Imported(message["module"], message.get("file"), None if error is None else check_load_error(error, "imported.error"))
    if kind == "target":
        STR(message.get("target"), "target.target")
        STR(message.get("kind"), "target.kind")
        STR(message.get("module"), "target.module")
        OPT_STR(message.get("file"), "target.file")
        OPT_INT(message.get("line"), "target.line")
        return TargetStarted(message["target"], message["kind"], message["module"], message.get("file"), message.get("line"))
    if kind == "example":
        STR(message.get("target"), "example.target")
        STR(message.get("example"), "example.example")
        return ExampleStarted(message["target"], message["example"])
    if kind == "report":
        STR(message.get("target"), "report.target")
        prompt, error = message.get("prompt"), message.get("error")
        if error is not None:
            error = check_load_error(error, "report.error")
        if prompt is not None:
            prompt = check_prompt(prompt, f"the report of {message['target']!r}")
        elif error is None:
            raise MalformedReport("it holds neither a report nor an error")
        return TargetReported(message["target"], prompt, error)
    if kind == "exit":
        INT(message.get("code"), "exit.code")
        OPT_STR(message.get("file"), "exit.file")
        OPT_INT(message.get("line"), "exit.line")
        return ExitCalled(message["code"], message.get("file"), message.get("line"))
    raise MalformedReport(f"unknown progress event {str(kind)[:80]!r}")


def malformed_error(problem: MalformedReport, *, what: str, file: str | None = None, line: int | None = None) -> LoadErrorDict:
    """The load error shown for a malformed value from a worker."""
    message = (
        f"the worker sent a malformed {what} ({problem}); crux-devtools cannot show it. "
        "Does user code replace crux_devtools functions (monkeypatching)? Remove that to see this report"
    )
    return LoadError.plain("MalformedReport", message, file=file, line=line).to_dict()
