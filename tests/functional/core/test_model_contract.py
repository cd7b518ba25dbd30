"""The model-provider contract: ``Model`` tells the truth about what the library calls on an adapter,
and an adapter written only from docs/models.md runs through ``generate()`` against a real server."""

from __future__ import annotations

import ast
import asyncio
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from chat_server import ChatServer
from crux_devtools import (
    RunError,
    Model,
    ModelCapacityProfile,
    ModelError,
    ModelRequest,
    ModelResponse,
    OpenAICompatibleModel,
    ScriptedModel,
    context,
    generate,
    preview,
    prompt,
    summarizable,
    summarize,
    tool,
)
from crux_devtools.core.run.models import OPTIONAL_HOOKS

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "models.md"
PACKAGE = REPO / "crux_devtools"


def doc_example() -> str:
    """The one Python block of the doc's "Writing a provider adapter" section, as written."""
    section = DOC.read_text().split("## Writing a provider adapter", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the adapter section holds exactly one complete example"
    return blocks[0]


def load_doc_adapter() -> type:
    namespace: dict[str, Any] = {"__name__": "docs_models_example"}
    exec(compile(doc_example(), str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own example
    return namespace["OllamaChatModel"]


class City(BaseModel):
    city: str


lookup = tool("lookup", description="Look up the weather of a city.", parameters=City, execute=lambda a: f"12 °C in {a.city}")


def weather_prompt() -> Any:
    return prompt(
        "weather",
        system="You answer weather questions in one sentence.",
        prompt="Weather in Oslo?",
        use=[context("units", system="Use degrees Celsius.")],
        tools=[lookup],
    )


def ollama_answer(message: dict[str, Any], **counts: int) -> dict[str, Any]:
    """A non-streaming /api/chat answer as Ollama's API documentation shows it."""
    return {"model": "llama3.2", "created_at": "2026-11-30T15:00:00Z", "message": {"role": "assistant", **message}, "done": True, **counts}


@pytest.fixture
def ollama() -> Iterator[ChatServer]:
    with ChatServer(route="/api/chat") as server:
        yield server


# --- the protocol ----------------------------------------------------------------------------------


def test_the_shipped_adapters_and_the_documented_one_are_models() -> None:
    adapter = load_doc_adapter()
    from crux_devtools import AnthropicModel

    for model in (ScriptedModel(["hi"]), OpenAICompatibleModel("http://127.0.0.1:9/v1", "m"), AnthropicModel("claude-x"), adapter("llama3.2")):
        assert isinstance(model, Model), type(model).__name__


def test_every_adapter_shipped_in_the_models_folder_is_a_public_name() -> None:
    """A class with ``complete`` in a module of ``core/run/models/`` is re-exported by the folder's
    ``__init__`` and named in the core's table (``_SOURCES["run.models"]``), so ``from crux_devtools import`` finds it."""
    import importlib
    import pkgutil

    import crux_devtools
    from crux_devtools.core.run import models

    shipped = set()
    for info in pkgutil.iter_modules(models.__path__):
        module = importlib.import_module(f"{models.__name__}.{info.name}")
        shipped |= {name for name, value in vars(module).items() if isinstance(value, type) and value.__module__ == module.__name__ and callable(getattr(value, "complete", None))}
    assert {"ScriptedModel", "OpenAICompatibleModel", "AnthropicModel"} <= shipped
    assert shipped <= set(models.__all__), "import the adapter in core/run/models/__init__.py and name it in __all__"
    assert shipped <= set(crux_devtools.__all__), "name the adapter in _SOURCES['run.models'] of core/__init__.py (and its TYPE_CHECKING import)"


def test_an_object_without_complete_is_not_a_model_even_with_every_optional_hook() -> None:
    class OnlyHooks:
        name = "x"
        capacity = None

        async def acomplete(self, request: ModelRequest) -> ModelResponse:
            return ModelResponse("x")

    assert not isinstance(OnlyHooks(), Model)
    assert not isinstance(object(), Model)


def model_probes() -> dict[str, list[str]]:
    """Every ``getattr``/``hasattr`` the package makes on a value named ``model`` (``model``,
    ``s.model``, ``summ.model``, ...), by attribute name, with where it is made."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")):
                continue
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant) or not isinstance(node.args[1].value, str):
                continue
            target = ast.unparse(node.args[0])
            if re.fullmatch(r"(?:\w+\.)*model", target):
                found.setdefault(node.args[1].value, []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_every_attribute_the_library_probes_on_a_model_is_the_required_method_or_a_documented_hook() -> None:
    probes = model_probes()
    assert "count_tokens" in probes and "capacity" in probes, "the scan must see the known probes"
    assert set(probes) == {"complete", *OPTIONAL_HOOKS}, probes
    protocol_doc = Model.__doc__ or ""
    guide = DOC.read_text().split("## Writing a provider adapter", 1)[1]
    for name in ("complete", *OPTIONAL_HOOKS):
        assert f"``{name}" in protocol_doc, f"Model's docstring does not document {name!r}"
        assert f"`{name}" in guide, f"docs/models.md does not document {name!r}"


def test_each_optional_hook_is_used_when_present_as_documented() -> None:
    class Probe:
        def __init__(self) -> None:
            self.seen: list[str] = []

        @property
        def name(self) -> str:
            self.seen.append("name")
            return "probe-model"

        @property
        def capacity(self) -> None:
            self.seen.append("capacity")
            return None

        @property
        def capacity_resolver(self) -> Any:
            self.seen.append("capacity_resolver")
            return lambda name: ModelCapacityProfile(4096, 512, "exact") if name == "probe-model" else None

        def count_tokens(self, text: str) -> int:
            self.seen.append("count_tokens")
            return len(text.split())

        def complete(self, request: ModelRequest) -> ModelResponse:
            self.seen.append("complete")
            return ModelResponse("sync answer")

        async def acomplete(self, request: ModelRequest) -> ModelResponse:
            self.seen.append("acomplete")
            return ModelResponse("async answer")

        async def astream(self, request: ModelRequest) -> Any:
            self.seen.append("astream")
            yield "streamed "
            yield "answer"
            yield ModelResponse("streamed answer")

    model = Probe()
    planned = preview(weather_prompt(), input={}, model=model)
    assert (planned.model, planned.context_window, planned.capacity_source, planned.measurement) == ("probe-model", 4096, "resolver", "exact")
    class Words:
        def count(self, text: str) -> int:
            return len(text.split())

    # Counted with count_tokens: the same numbers as an explicit word counter, not tiktoken's.
    profile = ModelCapacityProfile(4096, 512, "exact")
    assert planned.input_tokens == preview(weather_prompt(), input={}, model=profile, counter=Words()).input_tokens
    assert planned.input_tokens != preview(weather_prompt(), input={}, model=profile).input_tokens
    assert "complete" not in model.seen and "acomplete" not in model.seen, "preview never calls the model"

    result = generate(weather_prompt(), input={}, model=model)
    assert result.text == "async answer", "acomplete is preferred over complete"
    assert "astream" not in model.seen, "without on_text nothing is streamed"
    pieces: list[str] = []
    assert generate(weather_prompt(), input={}, model=model, on_text=pieces.append).text == "streamed answer"
    assert pieces == ["streamed ", "answer"], "with on_text the answer streams through astream"
    assert set(model.seen) == {*OPTIONAL_HOOKS}, sorted(set(model.seen))


def test_a_model_with_only_complete_is_called_by_generate_and_by_a_summary_rung() -> None:
    class Plain:
        name = "plain"

        def __init__(self) -> None:
            self.calls = 0

        def complete(self, request: ModelRequest) -> ModelResponse:
            self.calls += 1
            return ModelResponse("a short summary" if request.system.startswith("Summarize") else "answer")

    model = Plain()
    assert generate(weather_prompt(), input={}, model=model).text == "answer"
    rung = summarizable(context("notes", system="Long notes. " * 50), model=model)  # accepted: complete() is enough
    assert rung.model is model
    summary = asyncio.run(summarize.hierarchical().summarize_with(model, "Long notes. " * 50))
    assert summary == "a short summary" and model.calls == 2


# --- the documented example, run as written ----------------------------------------------------------


def test_the_adapter_written_in_the_docs_runs_a_tool_loop_through_generate(ollama: ChatServer) -> None:
    OllamaChatModel = load_doc_adapter()
    ollama.reply_json(ollama_answer({"content": "", "tool_calls": [{"function": {"name": "lookup", "arguments": {"city": "Oslo"}}}]}, prompt_eval_count=41, eval_count=9))
    ollama.reply_json(ollama_answer({"content": "It is 12 °C in Oslo."}))  # no counts: Ollama leaves them out sometimes

    result = generate(weather_prompt(), input={}, model=OllamaChatModel("llama3.2", base_url=ollama.root_url), max_tokens=200)

    assert result.stop_reason == "text" and result.text == "It is 12 °C in Oslo."
    first, second = result.steps
    assert first.tool_results[0].output == "12 °C in Oslo"
    assert first.usage == {"input_tokens": 41, "output_tokens": 9} and second.usage is None
    assert first.request.model == "llama3.2"
    sent = [r.body for r in ollama.received]
    assert [r.path for r in ollama.received] == ["/api/chat", "/api/chat"]
    # What the receipt says was sent is what went over the wire.
    assert sent[0]["messages"][0] == {"role": "system", "content": first.sent.system}
    assert sent[0]["messages"][1:] == first.sent.to_dict()["messages"]
    assert sent[0]["stream"] is False and sent[0]["options"] == {"num_predict": 200}
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["lookup"]
    assistant, tool_message = sent[1]["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"] == [{"function": {"name": "lookup", "arguments": {"city": "Oslo"}}}]
    assert tool_message == {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "12 °C in Oslo"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("answer", "kind", "status", "says"),
    [
        ({"status": 503, "body": "model is loading"}, "http", 503, "HTTP 503: 'model is loading'"),
        ({"status": 200, "body": '{"done": true}'}, "malformed", None, "not a chat answer"),
        ({"status": 200, "body": '{"message": {"role": "assistant", "content": ""}, "done": true}'}, "malformed", None, "neither text nor tool calls"),
        ({"status": 200, "body": '{"message": {"tool_calls": [{"function": {"name": "lookup", "arguments": "[1]"}}]}}'}, "malformed", None, "not a chat answer"),
    ],
)
def test_the_documented_adapter_raises_model_errors_of_the_documented_kinds(ollama: ChatServer, answer: dict[str, Any], kind: str, status: int | None, says: str) -> None:
    from chat_server import ScriptedAnswer

    OllamaChatModel = load_doc_adapter()
    model = OllamaChatModel("llama3.2", base_url=ollama.root_url)
    ollama.reply(ScriptedAnswer(status=answer["status"], body=answer["body"]))
    with pytest.raises(ModelError) as caught:
        model.complete(ModelRequest(system="s", messages=[{"role": "user", "content": "hi"}], tools=[]))
    assert (caught.value.kind, caught.value.status, caught.value.model) == (kind, status, "llama3.2")
    assert says in str(caught.value)


def test_the_documented_adapter_reports_an_unreachable_server_as_a_transport_error_that_ends_the_run() -> None:
    OllamaChatModel = load_doc_adapter()
    model = OllamaChatModel("llama3.2", base_url=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ModelError) as caught:
        model.complete(ModelRequest(system="s", messages=[], tools=[]))
    assert caught.value.kind == "transport" and "is `ollama serve` running?" in str(caught.value)

    with pytest.raises(RunError) as ended:
        generate(weather_prompt(), input={}, model=model)
    result = ended.value.result
    assert result.stop_reason == "error" and result.error is not None and ended.value.__cause__ is not None
    assert result.error.type == "ModelError" and "cannot reach Ollama" in result.error.message
