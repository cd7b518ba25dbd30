"""``OpenAICompatibleModel``: the chat-completions wire format over httpx, which OpenAI, vLLM, the
llama.cpp server and Ollama all accept, and ``parse_chat_completion``, its answer parser.

Every fault on the way to or from the server (transport, HTTP status, timeout, malformed answer) is
a ``ModelError`` whose ``kind`` says which. httpx is imported on first use, so that
``import crux_devtools`` stays light.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ...errors import ModelError
from ...contract import ModelRequest, ModelResponse, ToolCall, capacity_dict, tool_call

if TYPE_CHECKING:
    import httpx

_BODY_EXCERPT_CHARS = 200


def check_http_adapter(base_url: Any, model: Any, timeout: Any, client: Any, example: str) -> None:
    """The arguments every HTTP adapter takes, checked alike (``ValueError``/``TypeError`` saying why)."""
    import httpx  # imported here so that `import crux_devtools` stays light

    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http(s) URL such as {example!r}, got {base_url!r}")
    if httpx.URL(base_url).userinfo:
        # The URL is shown in to_dict() and error messages, so it must never carry a secret.
        raise ValueError("base_url must not contain credentials (user:password@); pass the key as api_key= instead")
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a non-empty model name, got {model!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if client is not None and not isinstance(client, (httpx.Client, httpx.AsyncClient)):
        raise TypeError(f"client must be an httpx.Client or httpx.AsyncClient, got {type(client).__name__}")


def post_json(client: Any, url: str, body: Any, headers: dict[str, str], timeout: float) -> httpx.Response:
    """POST ``body`` as JSON with ``client`` when it is an ``httpx.Client``, else a client of its own."""
    import httpx

    if isinstance(client, httpx.Client):
        return client.post(url, json=body, headers=headers, timeout=timeout)
    with httpx.Client(timeout=timeout) as own:
        return own.post(url, json=body, headers=headers)


async def apost_json(client: Any, url: str, body: Any, headers: dict[str, str], timeout: float) -> httpx.Response:
    """The async form of ``post_json`` (``client`` used when it is an ``httpx.AsyncClient``)."""
    import httpx

    if isinstance(client, httpx.AsyncClient):
        return await client.post(url, json=body, headers=headers, timeout=timeout)
    async with httpx.AsyncClient(timeout=timeout) as own:
        return await own.post(url, json=body, headers=headers)


@contextlib.asynccontextmanager
async def stream_post(client: Any, url: str, body: Any, headers: dict[str, str], timeout: float) -> AsyncIterator[httpx.Response]:
    """POST ``body`` and hold the answer open while its body streams (``client`` used when it is an
    ``httpx.AsyncClient``, else a client of its own for this one call)."""
    import httpx

    async with contextlib.AsyncExitStack() as stack:
        if not isinstance(client, httpx.AsyncClient):
            client = await stack.enter_async_context(httpx.AsyncClient(timeout=timeout))
        response = await stack.enter_async_context(client.stream("POST", url, json=body, headers=headers, timeout=timeout))
        yield response


async def sse_events(response: httpx.Response) -> AsyncIterator[Any]:
    """The decoded JSON of each ``data:`` line the answer streams, up to ``[DONE]``."""
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            payload = line[5:].strip()
            if payload == "[DONE]":
                return
            if payload:
                yield json.loads(payload)


class OpenAICompatibleModel:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` is the API root (``https://api.openai.com/v1``, ``http://127.0.0.1:8000/v1`` for
    vLLM or the llama.cpp server, ``http://127.0.0.1:11434/v1`` for Ollama). The API key comes from
    ``api_key`` or, when that is ``None``, from ``OPENAI_API_KEY`` at call time; it is sent as a
    Bearer header and never appears in ``repr`` or ``to_dict``. ``client`` may be a ready
    ``httpx.Client`` (used by ``complete``) or ``httpx.AsyncClient`` (used by ``acomplete``);
    otherwise each call opens and closes its own.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        capacity: Any = None,
        timeout: float = 60.0,
        client: httpx.Client | httpx.AsyncClient | None = None,
    ) -> None:
        check_http_adapter(base_url, model, timeout, client, "http://127.0.0.1:8000/v1")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        self.capacity = capacity
        self.timeout = float(timeout)
        self._api_key = api_key
        self._client = client

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (no secrets: the key travels in a header)."""
        return request.to_openai(self.model)

    def _headers(self) -> dict[str, str]:
        key = self._api_key if self._api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(self, request: ModelRequest) -> ModelResponse:
        """POST the request and parse the answer; every failure becomes a ``ModelError``."""
        import httpx

        body, headers = self.payload(request), self._headers()
        try:
            response = post_json(self._client, self.url, body, headers, self.timeout)
        except httpx.TimeoutException as exc:
            raise self._timeout_error(exc) from exc
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from exc
        return self._parse(response)

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        """Async form of ``complete`` over ``httpx.AsyncClient``."""
        import httpx

        body, headers = self.payload(request), self._headers()
        try:
            response = await apost_json(self._client, self.url, body, headers, self.timeout)
        except httpx.TimeoutException as exc:
            raise self._timeout_error(exc) from exc
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from exc
        return self._parse(response)

    async def astream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        """The answer streamed (``stream: true``, ``stream_options: {"include_usage": true}``): the
        text's pieces as they arrive, then the whole ``ModelResponse``, usage included, equal to
        what ``acomplete`` returns for the same answer. A stream cut before its last chunk is a
        ``ModelError`` (``kind="transport"``) that says how much had arrived."""
        import httpx

        from .streaming import ChatStream

        body = {**self.payload(request), "stream": True, "stream_options": {"include_usage": True}}
        headers = {**self._headers(), "Accept": "text/event-stream"}
        assembler = ChatStream()
        try:
            async with stream_post(self._client, self.url, body, headers, self.timeout) as response:
                if response.status_code >= 400:
                    await response.aread()
                    self._parse(response)  # raises the HTTP error with its hint
                async for chunk in sse_events(response):
                    text = assembler.feed(chunk)
                    if text:
                        yield text
        except httpx.TimeoutException as exc:
            raise self._cut(assembler, exc) if assembler.chunks else self._timeout_error(exc) from exc
        except httpx.TransportError as exc:
            raise self._cut(assembler, exc) if assembler.chunks else self._transport_error(exc) from exc
        except json.JSONDecodeError as exc:
            raise self._malformed(f"a streamed chunk is not JSON ({exc.msg})") from exc
        if not assembler.done:
            raise self._cut(assembler, None)
        yield parse_chat_completion(assembler.completion(), model=self.model, url=self.url)

    def _cut(self, assembler: Any, exc: Exception | None) -> ModelError:
        why = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
        return ModelError(
            f"the stream from model {self.model!r} at {self.url} was cut after {assembler.chunks} chunks "
            f"and {len(assembler.text)} characters of text{why}; retry the call",
            kind="transport",
            model=self.model,
        )

    def _timeout_error(self, exc: Exception) -> ModelError:
        return ModelError(
            f"model {self.model!r} at {self.url} did not answer within {self.timeout:g} s "
            f"({type(exc).__name__}); check that the server is up, or raise timeout=",
            kind="timeout",
            model=self.model,
        )

    def _transport_error(self, exc: Exception) -> ModelError:
        return ModelError(
            f"could not reach model {self.model!r} at {self.url}: {type(exc).__name__}: {exc}; "
            "check base_url and that the server is running",
            kind="transport",
            model=self.model,
        )

    def _parse(self, response: httpx.Response) -> ModelResponse:
        if response.status_code >= 400:
            excerpt = _excerpt(response.text)
            hint = {
                401: "check the API key (api_key= or OPENAI_API_KEY)",
                403: "check the API key's permissions",
                404: "check base_url (it should end at the API root, e.g. /v1) and the model name",
                429: "the server is rate limiting; retry later or lower the request rate",
            }.get(response.status_code, "check the server's logs")
            raise ModelError(
                f"model {self.model!r} at {self.url} answered HTTP {response.status_code}: {excerpt!r}; {hint}",
                kind="http",
                status=response.status_code,
                model=self.model,
            )
        try:
            data = response.json()
        except ValueError as exc:
            raise self._malformed(f"the body is not JSON: {_excerpt(response.text)!r}") from exc
        return parse_chat_completion(data, model=self.model, url=self.url)

    def _malformed(self, detail: str) -> ModelError:
        return _malformed(self.model, self.url, detail)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "openai-compatible",
            "name": self.name,
            "model": self.model,
            "base_url": self.base_url,
            "timeout": self.timeout,
            "capacity": capacity_dict(self.capacity),
        }

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel(base_url={self.base_url!r}, model={self.model!r})"


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _BODY_EXCERPT_CHARS else text[:_BODY_EXCERPT_CHARS] + "…"


def _malformed(model: str, url: str, detail: str) -> ModelError:
    return ModelError(
        f"model {model!r} at {url} sent a malformed chat completion: {detail}; "
        "check that the server speaks the OpenAI chat-completions format",
        kind="malformed",
        model=model,
    )


def _bad_arguments(model: str, detail: str) -> ModelError:
    # The server relayed the answer correctly; the model wrote arguments its tools cannot take.
    return ModelError(
        f"model {model!r} wrote a tool call the tools cannot take: {detail}; this is the model's output, "
        "not a wire-format fault: a stronger model, a simpler parameters schema or a retry usually helps",
        kind="malformed",
        model=model,
    )


def parse_chat_completion(data: Any, *, model: str = "model", url: str = "<response>") -> ModelResponse:
    """Turn a decoded chat-completions body into a ``ModelResponse`` (first choice only)."""
    if not isinstance(data, dict):
        raise _malformed(model, url, f"expected a JSON object, got {type(data).__name__}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _malformed(model, url, f"no choices in the answer: {_excerpt(json.dumps(data))!r}")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise _malformed(model, url, "choices[0] has no message object")
    text = _message_text(message.get("content"), model, url)
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise _malformed(model, url, f"tool_calls must be a list, got {type(raw_calls).__name__}")
    calls = [_parse_tool_call(i, raw, model, url) for i, raw in enumerate(raw_calls)]
    if calls and text is not None and not text.strip():
        text = None  # some servers (Ollama among them) send "" beside tool calls; it is not an answer
    if text is None and not calls:
        raise _malformed(model, url, "the message has neither text content nor tool calls")
    return ModelResponse(text=text, tool_calls=calls, usage=parse_usage(data.get("usage")))


def parse_usage(raw: Any) -> dict[str, int] | None:
    """The provider's token usage (``prompt_tokens``/``completion_tokens``, or the ``input_tokens``/
    ``output_tokens`` spelling) as ``{"input_tokens", "output_tokens"}``, plus ``cache_read_tokens``
    (``cached_tokens``) and ``cache_write_tokens`` (``cache_write_tokens``, reported by models that
    bill cache writes) when the details report any, read from ``prompt_tokens_details`` (chat
    completions) or ``input_tokens_details`` (the Responses spelling). Both are part of
    ``input_tokens``. ``None`` if absent or odd."""
    if not isinstance(raw, dict):
        return None
    def number(*keys: str) -> int | None:
        for key in keys:
            value = raw.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return None
    input_tokens = number("prompt_tokens", "input_tokens")
    output_tokens = number("completion_tokens", "output_tokens")
    if input_tokens is None and output_tokens is None:
        return None
    usage = {"input_tokens": input_tokens or 0, "output_tokens": output_tokens or 0}
    for spelling in ("prompt_tokens_details", "input_tokens_details"):
        details = raw.get(spelling)
        if not isinstance(details, dict):
            continue
        for wire, ours in (("cached_tokens", "cache_read_tokens"), ("cache_write_tokens", "cache_write_tokens")):
            value = details.get(wire)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                usage.setdefault(ours, value)  # part of input_tokens, priced at its own rate
    return usage


def _message_text(content: Any, model: str, url: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "".join(texts) if texts else None
    raise _malformed(model, url, f"message content must be a string, got {type(content).__name__}")


def _parse_tool_call(index: int, raw: Any, model: str, url: str) -> ToolCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        raise _malformed(model, url, f"tool call #{index} has no function object")
    function = raw["function"]
    call_id = raw.get("id")
    label = f"tool call #{index}" + (f" (id {call_id!r})" if call_id else "")
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _malformed(model, url, f"{label} has no function name")
    label = f"{label} to {name!r}"
    arguments = function.get("arguments")
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        decoded: Any = {}
    elif isinstance(arguments, dict):
        decoded = arguments
    elif isinstance(arguments, str):
        try:
            decoded = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise _bad_arguments(model, f"{label} has arguments that are not valid JSON ({exc.msg}): {_excerpt(arguments)!r}") from exc
    else:
        raise _malformed(model, url, f"{label} has arguments of type {type(arguments).__name__}, expected a JSON string")
    if not isinstance(decoded, dict):
        raise _bad_arguments(model, f"{label} has arguments that decode to {type(decoded).__name__}, expected a JSON object")
    return tool_call(name, decoded, id=call_id if isinstance(call_id, str) and call_id else None)
