"""``AnthropicModel``: Anthropic's Messages API over httpx. The translation of a planned request into
it is ``ModelRequest.to_anthropic()`` (``messages_body`` in ``core/contract.py``).

The conversation the planner keeps is in the OpenAI chat shape; the Messages API differs in four ways
the translation handles: the system text is a top-level ``system`` string, an assistant's tool calls are
``tool_use`` content blocks with their arguments as a JSON object, each tool result is a
``tool_result`` block inside a *user* message (consecutive results in one message, as the API
requires alternating roles), and a tool is ``{"name", "description", "input_schema"}``.

Usage: Anthropic's ``input_tokens`` excludes the tokens read from or written to the prompt cache;
``ModelResponse.usage["input_tokens"]`` here is the whole input (the three added up), with
``cache_read_tokens`` and ``cache_write_tokens`` beside it, so a cost can price each at its rate.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ...errors import ModelError
from ...contract import ModelRequest, ModelResponse, capacity_dict, messages_body, tool_call
from .openai import _excerpt, apost_json, check_http_adapter, post_json, sse_events, stream_post

if TYPE_CHECKING:
    import httpx

API_VERSION = "2023-06-01"


# -- the request -----------------------------------------------------------------------------------
# -- the answer ------------------------------------------------------------------------------------
def parse_message(data: Any, *, model: str = "model", url: str = "<response>") -> ModelResponse:
    """A decoded Messages API answer as a ``ModelResponse`` (text blocks joined, ``tool_use`` blocks
    as tool calls, usage with cache counts)."""
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise _malformed(model, url, f"expected a message object with a content list, got {_excerpt(json.dumps(data, default=str))!r}")
    texts: list[str] = []
    calls = []
    for index, block in enumerate(data["content"]):
        if not isinstance(block, dict):
            raise _malformed(model, url, f"content block #{index} is not an object")
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            name, arguments = block.get("name"), block.get("input")
            if not isinstance(name, str) or not name.strip():
                raise _malformed(model, url, f"tool_use block #{index} has no name")
            if not isinstance(arguments, dict):
                raise ModelError(
                    f"model {model!r} wrote a tool call to {name!r} whose input is {type(arguments).__name__}, not a JSON object; "
                    "this is the model's output: a simpler input schema or a retry usually helps",
                    kind="malformed", model=model,
                )
            block_id = block.get("id")
            calls.append(tool_call(name, arguments, id=block_id if isinstance(block_id, str) and block_id else None))
    text = "".join(texts) if texts else None
    if calls and text is not None and not text.strip():
        text = None
    if text is None and not calls:
        raise _malformed(model, url, f"the message has neither text nor tool_use blocks (stop_reason {data.get('stop_reason')!r})")
    return ModelResponse(text=text, tool_calls=calls, usage=parse_anthropic_usage(data.get("usage")))


def parse_anthropic_usage(raw: Any) -> dict[str, int] | None:
    """Anthropic's usage as ``{"input_tokens" (all input, cached included), "output_tokens",
    "cache_read_tokens", "cache_write_tokens"}``, and ``cache_write_1h_tokens`` (the part of the
    writes made with a one-hour lifetime, ``cache_creation.ephemeral_1h_input_tokens``) when there
    is any; ``None`` when absent."""
    if not isinstance(raw, dict):
        return None

    def count(key: str, within: Any = raw) -> int:
        value = within.get(key) if isinstance(within, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

    if not any(isinstance(raw.get(k), int) for k in ("input_tokens", "output_tokens")):
        return None
    read, written = count("cache_read_input_tokens"), count("cache_creation_input_tokens")
    split = raw.get("cache_creation")
    if isinstance(split, dict) and not written:  # only the split was sent: the writes are its sum
        written = count("ephemeral_5m_input_tokens", split) + count("ephemeral_1h_input_tokens", split)
    usage = {"input_tokens": count("input_tokens") + read + written, "output_tokens": count("output_tokens")}
    if read or written:
        usage["cache_read_tokens"], usage["cache_write_tokens"] = read, written
    one_hour = min(count("ephemeral_1h_input_tokens", split), written)
    if one_hour:
        usage["cache_write_1h_tokens"] = one_hour
    return usage


def _malformed(model: str, url: str, detail: str) -> ModelError:
    return ModelError(
        f"model {model!r} at {url} sent a malformed Messages API answer: {detail}; check that the server speaks Anthropic's Messages format",
        kind="malformed", model=model,
    )


# -- the adapter -----------------------------------------------------------------------------------
class AnthropicModel:
    """A Claude model behind Anthropic's ``/v1/messages`` endpoint (or a server that speaks it).

    The key is ``api_key`` or, when that is ``None``, ``ANTHROPIC_API_KEY`` at call time; it travels
    only in the ``x-api-key`` header, never in ``repr``, ``to_dict`` or an error. ``default_max_tokens``
    is sent when the plan sets no ``max_tokens`` (the API requires one). ``client`` may be a ready
    ``httpx.Client`` (for ``complete``) or ``httpx.AsyncClient`` (for ``acomplete``).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "https://api.anthropic.com",
        api_key: str | None = None,
        capacity: Any = None,
        timeout: float = 60.0,
        default_max_tokens: int = 4096,
        client: httpx.Client | httpx.AsyncClient | None = None,
    ) -> None:
        check_http_adapter(base_url, model, timeout, client, "https://api.anthropic.com")
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        self.model = self.name = model
        self.capacity = capacity
        self.timeout = float(timeout)
        self.default_max_tokens = default_max_tokens
        self._api_key = api_key
        self._client = client

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (no secrets: the key travels in a header)."""
        return messages_body(request, self.model, self.default_max_tokens)

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json", "anthropic-version": API_VERSION}
        key = self._api_key if self._api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        if key:
            headers["x-api-key"] = key
        return headers

    def complete(self, request: ModelRequest) -> ModelResponse:
        """POST the request and parse the answer; every failure becomes a ``ModelError``."""
        import httpx

        try:
            response = post_json(self._client, self.url, self.payload(request), self._headers(), self.timeout)
        except httpx.HTTPError as exc:
            raise self._failed(exc) from exc
        return self._parse(response)

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        """Async form of ``complete`` over ``httpx.AsyncClient``."""
        import httpx

        try:
            response = await apost_json(self._client, self.url, self.payload(request), self._headers(), self.timeout)
        except httpx.HTTPError as exc:
            raise self._failed(exc) from exc
        return self._parse(response)

    async def astream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        """The answer streamed (``stream: true``; Messages events): the text's pieces as they
        arrive, then the whole ``ModelResponse``, usage and cache counts included, equal to what
        ``acomplete`` returns for the same answer. An ``error`` event, or a stream cut before
        ``message_stop``, is a ``ModelError`` that says how much had arrived."""
        import httpx

        from .streaming import MessageStream

        body = {**self.payload(request), "stream": True}
        headers = {**self._headers(), "accept": "text/event-stream"}
        assembler = MessageStream()
        try:
            async with stream_post(self._client, self.url, body, headers, self.timeout) as response:
                if response.status_code >= 400:
                    await response.aread()
                    self._parse(response)  # raises the HTTP error with its hint
                async for event in sse_events(response):
                    text = assembler.feed(event)
                    if text:
                        yield text
                    if assembler.error is not None or assembler.done:
                        break
        except httpx.HTTPError as exc:
            raise (self._cut(assembler, f"{type(exc).__name__}: {exc}") if assembler.chunks else self._failed(exc)) from exc
        except json.JSONDecodeError as exc:
            raise _malformed(self.model, self.url, f"a streamed event is not JSON ({exc.msg})") from exc
        if assembler.error is not None:
            error = assembler.error if isinstance(assembler.error, dict) else {}
            raise ModelError(
                f"model {self.model!r} at {self.url} sent an error event after {len(assembler.text)} characters of text: "
                f"{error.get('type')}: {error.get('message')}; retry later (an overloaded_error is the API being busy)",
                kind="http", model=self.model,
            )
        if not assembler.done:
            raise self._cut(assembler, "the stream ended before message_stop")
        yield parse_message(assembler.completion(), model=self.model, url=self.url)

    def _cut(self, assembler: Any, why: str) -> ModelError:
        return ModelError(
            f"the stream from model {self.model!r} at {self.url} was cut after {assembler.chunks} events and "
            f"{len(assembler.text)} characters of text ({why}); retry the call",
            kind="transport", model=self.model,
        )

    def _failed(self, exc: Exception) -> ModelError:
        import httpx

        if isinstance(exc, httpx.TimeoutException):
            return ModelError(f"model {self.model!r} at {self.url} did not answer within {self.timeout:g} s; check that the server is up, or raise timeout=", kind="timeout", model=self.model)
        return ModelError(f"could not reach model {self.model!r} at {self.url}: {type(exc).__name__}: {exc}; check base_url and that the server is running", kind="transport", model=self.model)

    def _parse(self, response: httpx.Response) -> ModelResponse:
        if response.status_code >= 400:
            hint = {
                401: "check the API key (api_key= or ANTHROPIC_API_KEY)",
                404: "check base_url and the model name",
                429: "the API is rate limiting; retry later",
                529: "the API is overloaded; retry later",
            }.get(response.status_code, "the body above says why")
            raise ModelError(
                f"model {self.model!r} at {self.url} answered HTTP {response.status_code}: {_excerpt(response.text)!r}; {hint}",
                kind="http", status=response.status_code, model=self.model,
            )
        try:
            data = response.json()
        except ValueError as exc:
            raise _malformed(self.model, self.url, f"the body is not JSON: {_excerpt(response.text)!r}") from exc
        return parse_message(data, model=self.model, url=self.url)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "anthropic", "name": self.name, "model": self.model, "base_url": self.base_url, "timeout": self.timeout, "capacity": capacity_dict(self.capacity)}

    def __repr__(self) -> str:
        return f"AnthropicModel(model={self.model!r}, base_url={self.base_url!r})"
