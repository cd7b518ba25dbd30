"""A small git project for the change-review tests: two prompt files sharing one context module."""

from __future__ import annotations

import subprocess
from pathlib import Path

SHARED = '''\
from pydantic import BaseModel

from crux_devtools import context, tool


class Order(BaseModel):
    order_id: str


lookup_order = tool("lookup_order", description="Look up an order.", parameters=Order, execute=lambda a: {})
refund = tool("refund", description="Refund an order.", parameters=Order, execute=lambda a: {})
house_rules = context("house-rules", priority=100, system="## House rules\\n- Be kind.")
billing = context("billing", priority=20, system="## Billing\\nQuote EUR.", tools=[lookup_order, refund])
'''

REPLY = '''\
from pydantic import BaseModel
from shared import billing, house_rules

from crux_devtools import prompt


class Q(BaseModel):
    question: str


reply = prompt("reply", system="You are Ari.", input=Q, use=[house_rules, billing], prompt=lambda i: i.question,
               token_budget=BUDGET, examples={"refund": {"question": "Refund me"}, "hello": {"question": "Hi"}})
'''

OTHER = '''\
from shared import house_rules

from crux_devtools import prompt

triage = prompt("triage", system="Sort the ticket.", use=[house_rules], examples={"one": {}})
notes = prompt("notes", system="Take notes.", use=[house_rules], examples={"a": {}})
'''

PYPROJECT = '''\
[tool.crux-devtools]
default_model = "house-model"

[tool.crux-devtools.models.house-model]
context_window = 8192
input_price = 3.0
output_price = 15.0
'''


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", message)


def make_project(tmp_path: Path) -> Path:
    """A git repository in ``tmp_path/repo`` with the project committed, its working tree clean."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "shared.py").write_text(SHARED)
    (root / "reply.py").write_text(REPLY.replace("BUDGET", "200"))
    (root / "other.py").write_text(OTHER)
    (root / "pyproject.toml").write_text(PYPROJECT)
    commit_all(root, "base")
    return root
