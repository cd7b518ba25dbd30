"""A small, healthy project: two contexts, a conditional one, a tool, examples."""

from pydantic import BaseModel

from crux_devtools import context, prompt, tool, when


class Style(BaseModel):
    tone: str = "friendly"


class Lookup(BaseModel):
    query: str


def lookup(params: Lookup) -> str:
    return f"result for {params.query}"


style = context("style", system=lambda i: f"Answer in a {i.tone} tone.", input=Style, priority=80)
expert = context("expert", system="You know the product catalogue by heart.", priority=20,
                 tools=[tool("lookup", description="Look a product up", parameters=Lookup, execute=lookup)])


class Question(BaseModel):
    question: str
    expert: bool = False


support = prompt(
    "support",
    system="You are a support agent.",
    prompt=lambda i: i.question,
    input=Question,
    use=[style, when(lambda i: i.expert, expert)],
    examples={"basic": {"question": "Where is my order?"}, "expert": {"question": "Which lamp?", "expert": True, "tone": "formal"}},
)

greeter = prompt("greeter", system="Say hello.")
