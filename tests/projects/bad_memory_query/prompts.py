"""Memories whose query and namespace callbacks fail: each is reported as that callback, at its own line."""

from pydantic import BaseModel

from crux_devtools import MemoryStore, facts, memory, prompt

store = MemoryStore(":memory:")
store.remember("user:dana", "Dana prefers email over phone", entry_type="fact")


class Question(BaseModel):
    question: str


def broken_query(i):
    raise KeyError("no such field: topic")


def number_query(i):
    return 42


raising = memory("raising-memory", store=store, namespace="user:dana", input=Question, query=broken_query,
                 blocks=[facts("facts")], fact_tool=None)
wrong_type = memory("number-memory", store=store, namespace="user:dana", input=Question, query=number_query,
                    blocks=[facts("facts")], fact_tool=None)
no_namespace = memory("nameless-memory", store=store, namespace=lambda i: None, input=Question, query="email",
                      blocks=[facts("facts")], fact_tool=None)

asks = prompt("asks", system="Help.", input=Question, use=[raising], examples={"basic": {"question": "email?"}})
counts = prompt("counts", system="Help.", input=Question, use=[wrong_type], examples={"basic": {"question": "email?"}})
nameless = prompt("nameless", system="Help.", input=Question, use=[no_namespace], examples={"basic": {"question": "email?"}})
