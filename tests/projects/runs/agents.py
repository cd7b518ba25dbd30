"""Agents for the runs tests: one that answers, ones that fail each way, a prompt with a model, a paid model."""

from pydantic import BaseModel
from crux_devtools import ModelCapacityProfile, OpenAICompatibleModel, ScriptedModel, agent, prompt, tool, tool_call


class Query(BaseModel):
    query: str


search = tool("search", description="Search", parameters=Query, execute=lambda p: f"found {p.query}")
explode = tool("explode", description="Fails", parameters=Query, execute=lambda p: 1 / 0)
ask = prompt("ask", system="Answer briefly.", prompt="Where is my parcel?", tools=[search, explode], examples={"first": {}})
CAP = ModelCapacityProfile(100_000, 0, "exact")

# Module-level scripted models: each Run must start from the first response again.
helper = agent("helper", prompt=ask, model=ScriptedModel([[tool_call("search", {"query": "parcel"})], "In Rotterdam."], capacity=CAP))
raiser = agent("raiser", prompt=ask, model=ScriptedModel([[tool_call("explode", {"query": "x"})]], capacity=CAP))
unknown = agent("unknown", prompt=ask, model=ScriptedModel([[tool_call("teleport", {})]], capacity=CAP))
bad_args = agent("bad-args", prompt=ask, model=ScriptedModel([[tool_call("search", {"q": 1})]], capacity=CAP))
short = agent("short", prompt=ask, model=ScriptedModel([[tool_call("search", {"query": "a"})]], capacity=CAP))
huge = agent("huge", prompt=prompt("huge-prompt", system="word " * 3000), model=ScriptedModel(["never"], capacity=ModelCapacityProfile(500, 50, "exact")))
solo = prompt("solo", system="Be brief.", prompt="hi", model=ScriptedModel(["Hi from a prompt."], name="solo-model"))
plain = prompt("plain", system="No model here.")
paid = agent("paid", prompt=ask, model=OpenAICompatibleModel("http://127.0.0.1:9/v1", "gpt-test", api_key="none"))
