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

A streamed call is recorded as it passes, never held back from the application:

    with record_call(support_prompt, input={"question": q}, model="gpt-4o-mini") as call:
        for chunk in call.stream(client.chat.completions.create(**call.to_openai(stream=True))):
            print(chunk.choices[0].delta.content or "", end="") if chunk.choices else None

``call.stream(s)`` wraps what the SDK returned (a sync or an async iterator of chat-completions
chunks or of Anthropic's Messages events, also ``client.messages.stream(...)``'s stream) and gives
each chunk on as it arrives; at the end of the stream it assembles the answer and its usage as the
non-streamed call would have returned them (``streaming.py``) and takes them as ``response`` does,
with the time to first token. While the run is recorded, an open run page shows the text as it
arrives (``live.py``). A stream cut mid-way (the iterator raised, or the application stopped
reading it and left the block) is recorded as an error step with the text that arrived.

Where it goes: ``dir`` when given, else every recorder that ``record_runs``/``CRUX_DEVTOOLS_RECORD``
turned on, else ``./.crux/runs.sqlite3``. A ``dir`` that ``record_runs`` already records into is
written once, by that recorder; every run is redacted by every ``redact`` in force, once.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
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

    def __init__(self, plan: RequestPreview, model_name: str | None, capture: RunCapture | None = None) -> None:
        assert plan.sent is not None
        self._capture = capture
        self._stream: RecordedStream | None = None
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
        """The planned request as ``client.chat.completions.create(**...)`` keyword arguments. With
        ``stream=True`` it also asks for the usage chunk (``stream_options={"include_usage": True}``)
        unless ``stream_options`` is given, so a streamed call's usage is recorded too."""
        if extra.get("stream") is True and "stream_options" not in extra:
            extra["stream_options"] = {"include_usage": True}
        return {**self.sent.to_openai(self.model_name), **extra}

    def to_anthropic(self, **extra: Any) -> dict[str, Any]:
        """The planned request as ``client.messages.create(**...)`` keyword arguments."""
        return {**self.sent.to_anthropic(self.model_name), **extra}

    def stream(self, chunks: Any) -> RecordedStream:
        """``chunks`` (the SDK's stream: sync or async) wrapped so each chunk goes on to the
        application as it arrives and the call is recorded from them (see the module docstring)."""
        if self._stream is not None:
            raise RuntimeError("call.stream(...) was already called in this block; record one call per record_call block")
        if not (hasattr(chunks, "__iter__") or hasattr(chunks, "__aiter__")):
            raise TypeError(
                f"call.stream() takes the stream the SDK returned (create(..., stream=True)), got {type(chunks).__name__}; "
                "for an answer that is not streamed use call.response(...)"
            )
        self._stream = RecordedStream(self, chunks)
        return self._stream

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


class RecordedStream:
    """A provider's stream passing through to the application; the call is recorded from it.

    Iterate it (``for`` or ``async for``) as the stream itself; it yields the very chunks the SDK
    gives. ``close()`` (or leaving its ``with``) closes the SDK's stream too.
    """

    __slots__ = ("_call", "_source", "_it", "_ait", "_assembler", "_live", "_first", "ended", "error", "chunks")

    def __init__(self, call: RecordedCall, source: Any) -> None:
        self._call = call
        self._source = source
        self._it: Iterator[Any] | None = None
        self._ait: AsyncIterator[Any] | None = None
        self._assembler: Any = None
        self._live: Any = None
        self._first: float | None = None
        self.ended = False  # the stream was read to its end (or failed): the call is settled
        self.error: BaseException | None = None
        self.chunks = 0
        capture = call._capture
        if capture is not None:
            self._live = capture.live_step(0)
            if self._live is not None:
                self._live.started = call._sent_at

    # -- the chunks pass ------------------------------------------------------------------------
    def __iter__(self) -> RecordedStream:
        if self._it is None:
            self._it = iter(self._source)
        return self

    def __next__(self) -> Any:
        try:
            chunk = next(self._it)  # type: ignore[arg-type]
        except StopIteration:
            self._end(None)
            raise
        except BaseException as exc:
            self._end(exc)
            raise
        self._seen(chunk)
        return chunk

    def __aiter__(self) -> RecordedStream:
        if self._ait is None:
            self._ait = self._source.__aiter__()
        return self

    async def __anext__(self) -> Any:
        try:
            chunk = await self._ait.__anext__()  # type: ignore[union-attr]
        except StopAsyncIteration:
            self._end(None)
            raise
        except BaseException as exc:
            self._end(exc)
            raise
        self._seen(chunk)
        return chunk

    def _seen(self, chunk: Any) -> None:
        assembler = self._assembler
        if assembler is None:
            from .models.streaming import assembler_for

            assembler = self._assembler = assembler_for(chunk)
        self.chunks += 1
        try:
            text = assembler.feed(chunk)
        except Exception:  # noqa: BLE001 - a chunk the recorder cannot read never reaches the application
            return
        if self._first is None and assembler.started:
            self._first = time.perf_counter()
        if text and self._live is not None:
            self._live.add(text)

    # -- the end --------------------------------------------------------------------------------
    def _end(self, exc: BaseException | None, why: str = "the stream ended before its last chunk") -> None:
        """The stream is settled: read to its end (``exc`` ``None``), failed (``exc``), or left
        unread (``why``); the answer is assembled from what arrived."""
        if self.ended:
            return
        self.ended, self.error = True, exc
        call = self._call
        call.latency_ms = round((time.perf_counter() - call._sent_at) * 1000, 3)
        assembler = self._assembler
        try:
            if assembler is not None:
                call.provider_response = storable(assembler.completion())
                if exc is None and assembler.done:
                    parse = parse_chat_completion if assembler.kind == "openai" else parse_message
                    call.answer = parse(assembler.completion(), model=call.model_name or "model")
        except Exception as parse_error:  # noqa: BLE001 - a stream that does not make an answer is the step's error
            self.error = parse_error
        if self.error is None and call.answer is None:
            self.error = _StreamCut(self, why)

    def close(self) -> None:
        """Stop reading: the SDK's stream is closed, and the call is recorded as cut here."""
        closer = getattr(self._source, "close", None)
        if callable(closer) and not self.ended:
            with contextlib.suppress(Exception):
                closed = closer()
                if hasattr(closed, "close"):  # an async stream's close() is a coroutine: not awaited from sync code
                    closed.close()
        self.stopped()

    def stopped(self) -> None:
        """The application is done with the stream (its block ends): a stream not read to its end is cut here."""
        self._end(None, "the application stopped reading it")

    def timing(self) -> dict[str, Any]:
        first = round((self._first - self._call._sent_at) * 1000, 3) if self._first is not None else None
        return {"first_token_ms": first, "chunks": self.chunks}

    def text(self) -> str | None:
        return (self._assembler.text or None) if self._assembler is not None else None

    def usage(self) -> dict[str, int] | None:
        """The usage the stream reported before it was cut, read as the finished answer's would be."""
        completion = self._call.provider_response
        if not isinstance(completion, dict):
            return None
        from .models.anthropic import parse_anthropic_usage
        from .models.openai import parse_usage

        return parse_usage(completion.get("usage")) if "choices" in completion else parse_anthropic_usage(completion.get("usage"))

    def __enter__(self) -> RecordedStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _StreamCut(Exception):
    """The application stopped reading a stream before its end."""

    def __init__(self, stream: RecordedStream, why: str) -> None:
        text = stream.text() or ""
        super().__init__(
            f"the stream was cut after {stream.chunks} chunks ({len(text)} characters of text): {why}; "
            "the step holds what had arrived"
        )


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
    call = RecordedCall(plan, model_name_of(model) or plan.model, capture)
    try:
        yield call
    except BaseException as exc:
        capture.finish(_result(call, exc))
        raise
    capture.finish(_result(call, None))


def _result(call: RecordedCall, exc: BaseException | None) -> Any:
    from .runtime import GenerateResult, Step

    stream = call._stream
    if stream is not None:
        stream.stopped()
        if exc is None and stream.error is not None:
            exc = stream.error  # the stream failed (or was cut) and the application carried on
    answer = call.answer
    error = ErrorInfo.from_exception(exc, f"the provider call failed: {type(exc).__name__}: {exc}") if exc is not None else None
    if isinstance(exc, _StreamCut):
        error = ErrorInfo("StreamCut", str(exc))
    if error is None and answer is None:
        error = ErrorInfo("NoResponse", "the block ended without call.response(...): the provider's answer was not recorded")
    if answer is not None:
        text, calls, usage = answer.text, list(answer.tool_calls), answer.usage
    else:
        text, calls, usage = (stream.text(), [], stream.usage()) if stream is not None else (None, [], None)
    step = Step(
        0, call.receipt, call.sent, text, calls, [], [], usage, call.latency_ms, error, stream=stream.timing() if stream is not None else None,
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
