"""Recording a call the application makes itself, through a provider's own SDK, as one run.

    with record_call(support_prompt, input={"question": q}, model="gpt-4o-mini") as call:
        resp = client.chat.completions.create(**call.to_openai())
        call.response(resp)

On entering, the request is planned exactly as ``preview``/``generate`` plan it (``call.sent`` is the
``ModelRequest``, ``call.receipt`` its ``Receipt``); ``call.to_openai()`` and ``call.to_anthropic()``
give it in each provider's wire shape, model name included. ``call.response(...)`` takes what the
SDK returned (an OpenAI ``ChatCompletion``, an Anthropic ``Message``, their dict forms, or a
``ModelResponse``) and reads its text, tool calls and usage. On leaving, the run is written like a
``generate`` run: one step with the planned request and its receipt, the answer, the provider's
usage and the call's latency (from entering the block to ``response``), and the provider's own
answer as ``provider_response``. An exception inside the block is recorded as the run's error and
goes on to the application; recording itself never raises into it.

Where it goes: ``dir`` when given, else every recorder that ``record_runs``/``CRUX_DEVTOOLS_RECORD``
turned on, else ``./.crux/runs.sqlite3``. A ``dir`` that ``record_runs`` already records into is
written once, by that recorder; every run is redacted by every ``redact`` in force, once.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..record import recording
from ..plan.budget import model_name_of
from ..errors import ErrorInfo, RequestCompositionError
from .models.anthropic import parse_message
from ..contract import ModelRequest, ModelResponse
from .models.openai import parse_chat_completion
from ..plan.receipts import Receipt, RequestPreview
from ..record.recording import RunCapture, RunRecorder, Scope
from ..plan.requests import new_request_id, preview
from ..record.runstore import storable

_recorders: dict[str, RunRecorder] = {}
_recorders_lock = threading.Lock()


class RecordedCall:
    """One call being recorded: the planned request, and what the provider answered."""

    def __init__(self, plan: RequestPreview, model_name: str | None) -> None:
        assert plan.sent is not None
        self.sent: ModelRequest = plan.sent
        self.model_name = model_name
        self.receipt = Receipt(
            id=new_request_id(), model=plan.model, input_tokens=plan.input_tokens, max_input_tokens=plan.max_input_tokens,
            optimize_at=plan.optimize_at, measurement=plan.measurement, adaptations=plan.adaptations, warnings=plan.warnings,
            epoch=0, previous_request_id=None, candidates=plan.candidates, contributions=plan.contributions, tools=plan.tools,
            tier=plan.tier or "max", token_budget=plan.token_budget, dropped=plan.dropped, tool_tokens=plan.tool_tokens,
        )
        self.answer: ModelResponse | None = None
        self.provider_response: Any = None
        self.latency_ms: float | None = None
        self._sent_at = time.perf_counter()

    def to_openai(self, **extra: Any) -> dict[str, Any]:
        """The planned request as ``client.chat.completions.create(**...)`` keyword arguments."""
        return {**self.sent.to_openai(self.model_name), **extra}

    def to_anthropic(self, **extra: Any) -> dict[str, Any]:
        """The planned request as ``client.messages.create(**...)`` keyword arguments."""
        return {**self.sent.to_anthropic(self.model_name), **extra}

    def response(self, answer: Any) -> ModelResponse:
        """Take the provider's answer (SDK object, its dict, or a ``ModelResponse``); returns it parsed."""
        self.latency_ms = round((time.perf_counter() - self._sent_at) * 1000, 3)
        if isinstance(answer, ModelResponse):
            parsed = answer
        else:
            data = provider_dict(answer)
            self.provider_response = storable(data)
            if isinstance(data, dict) and "choices" in data:
                parsed = parse_chat_completion(data, model=self.model_name or "model")
            else:
                parsed = parse_message(data, model=self.model_name or "model")
        self.answer = parsed
        return parsed


def provider_dict(answer: Any) -> Any:
    """An SDK response object as plain data (pydantic ``model_dump``, ``to_dict``), else itself."""
    for convert in ("model_dump", "to_dict"):
        method = getattr(answer, convert, None)
        if callable(method) and not isinstance(answer, dict):
            try:
                return method(mode="json") if convert == "model_dump" else method()
            except TypeError:
                return method()
    return answer


@contextlib.contextmanager
def record_call(
    target: Any,
    *,
    input: Any = None,
    model: Any = None,
    dir: str | os.PathLike[str] | None = None,
    messages: Sequence[dict[str, Any]] | None = None,
    input_budget: Any = None,
    max_tokens: int | None = None,
    active_tools: Sequence[str] | None = None,
) -> Iterator[RecordedCall]:
    """Plan ``target``'s request, let the application send it, and record the call as one run.

    ``model`` is what the request is planned for: an adapter, a ``ModelCapacityProfile`` or a model
    name (the name also goes into ``to_openai()``/``to_anthropic()``). A request that does not fit
    raises ``RequestCompositionError`` (and is recorded as a failed run), as ``generate`` would.
    """
    capture = RunCapture(target, input, Scope("app", _recorder_for(dir)))
    try:
        plan = preview(target, input=input, model=model, input_budget=input_budget, max_tokens=max_tokens, messages=messages, active_tools=active_tools)
        from ..compose.prompts import Prompt

        prompt = target if isinstance(target, Prompt) else target.prompt
        capture.planned(model if model is not None else plan.model, prompt.validate_input(input))
        if plan.sent is None:
            raise RequestCompositionError(plan.error_code or "REQUEST_TOO_LARGE", plan.warnings[0] if plan.warnings else "the request does not fit", diagnostics=plan.diagnostics)  # type: ignore[arg-type]
    except BaseException as exc:
        capture.finish(exc=exc)
        raise
    call = RecordedCall(plan, model_name_of(model) or plan.model)
    try:
        yield call
    except BaseException as exc:
        capture.finish(_result(call, exc))
        raise
    capture.finish(_result(call, None))


def _result(call: RecordedCall, exc: BaseException | None) -> Any:
    from .runtime import GenerateResult, Step

    answer = call.answer
    error = ErrorInfo.from_exception(exc, f"the provider call failed: {type(exc).__name__}: {exc}") if exc is not None else None
    if error is None and answer is None:
        error = ErrorInfo("NoResponse", "the block ended without call.response(...): the provider's answer was not recorded")
    step = Step(
        0, call.receipt, call.sent, answer.text if answer else None, list(answer.tool_calls) if answer else [], [], [],
        answer.usage if answer else None, call.latency_ms, error,
    )
    recorded: Any = _WithProviderResponse(step, call.provider_response)  # a Step to the recorder: it calls to_dict()
    return GenerateResult(answer.text if answer and error is None else None, [recorded], "error" if error else "text", error)


class _WithProviderResponse:
    """A step whose record also holds the provider's own answer (``provider_response``)."""

    def __init__(self, step: Any, provider_response: Any) -> None:
        self.step, self.provider_response = step, provider_response

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = self.step.to_dict()
        if self.provider_response is not None:
            data["provider_response"] = self.provider_response
        return data


def _recorder_for(dir: str | os.PathLike[str] | None) -> RunRecorder | None:
    """The recorder of ``dir`` (one per folder, kept); with no ``dir``, none when ``record_runs`` is
    on (its recorders get the run), else the current folder's."""
    if dir is None:
        if recording._active_now():
            return None
        dir = "."
    key = os.path.abspath(os.fspath(dir))
    for active in recording._active_now():
        if str(active.dir) == key:
            return active  # record_runs(dir, redact=...) already records there: one write, redacted by it
    with _recorders_lock:
        recorder = _recorders.get(key)
        if recorder is None or not recorder.enabled:
            recorder = _recorders[key] = RunRecorder(Path(key))
        return recorder


__all__ = ["RecordedCall", "record_call"]
