"""The pytest plugin, used as a user would: pytest in a subprocess over a project of its own that uses it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROMPTS = '''\
import socket

from pydantic import BaseModel

from crux_devtools import ScriptedModel, agent, context, example, expect, prompt, tool


class Q(BaseModel):
    question: str


class Need(BaseModel):
    order_id: str


lookup = tool("lookup_order", description="Look up an order.", parameters=Need, execute=lambda a: {})
style = context("style-examples", system="Example one. " * 20, priority=45)
brand = context("brand-voice", system="Calm and exact. " * 20, priority=30, tools=[lookup])
model = ScriptedModel(["never"], name="scripted")


def phone_home(i):
    socket.create_connection(("127.0.0.1", 9), timeout=1)
    return "unreachable"


reply = prompt("reply", system="You help.", input=Q, use=[style, brand], token_budget=150, prompt=lambda i: i.question,
               examples={"short": example({"question": "hi"}, expect=expect().excludes("brand-voice")), "long": {"question": "hello there"}})
helper = agent("helper", prompt=reply, model=model)
needy = prompt("needy", system="Needs input.", input=Need)
caller = prompt("caller", system=phone_home, examples={"one": {}})
'''

TESTS = '''\
import dataclasses

import pytest

from crux_devtools import expect
from prompts import model, reply


def test_plan_by_id(crux_plan):
    plan = crux_plan("reply", example="short")
    assert (plan.status, plan.contexts, dict(plan.dropped), plan.tools) == ("fits", ("style-examples",), {"brand-voice": "budget"}, ())
    assert plan.input_tokens > 0 and 0 < plan.cache_prefix_tokens < plan.input_tokens
    assert plan.sent.to_openai()["messages"][-1] == {"role": "user", "content": "hi"}
    assert plan.sent.system == plan.sent.to_anthropic()["system"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.status = "x"
    with pytest.raises(TypeError):
        plan.dropped["style-examples"] = "budget"
    plan.check(expect().includes("style-examples").no_tool("lookup_order").cacheable_prefix(min=10))


def test_plan_by_object_with_a_budget_and_an_input(crux_plan):
    plan = crux_plan(reply, input={"question": "why"}, budget=60)
    assert plan.example == "custom" and plan.status == "over-limit" and plan.sent is None


def test_the_agent_plans_without_calling_its_model(crux_plan):
    assert crux_plan("helper").tools == ()
    assert model.requests == []


def test_check_names_every_failure(crux_plan):
    crux_plan("reply").check(expect().includes("brand-voice").tool("lookup_ordr").tokens(max=5))


def test_unknown_id(crux_plan):
    crux_plan("replyy")


def test_network_refused(crux_plan):
    plan = crux_plan("caller")
    assert plan.status == "error"
    assert "crux-devtools refused a network connection to 127.0.0.1:9 made by prompts.py:" in plan.report["error"]["message"]


@pytest.mark.crux_examples("reply")
def test_each_example(crux_plan, crux_example):
    assert crux_plan("reply", example=crux_example).example == crux_example.name
    assert crux_example.input["question"]


@pytest.mark.crux_examples("needy")
def test_no_examples(crux_example):
    raise AssertionError("never runs")
'''


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0", "-rs", *args],
        cwd=root, capture_output=True, text=True, timeout=300,
    )


def test_the_plugin_plans_checks_parametrizes_and_guards_in_a_real_pytest_run(tmp_path: Path) -> None:
    (tmp_path / "prompts.py").write_text(PROMPTS)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_plans.py").write_text(TESTS)
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    out = run_pytest(tmp_path, "-v")
    text = out.stdout + out.stderr
    outcomes = {line.split(" ")[0].split("::")[-1]: line.split(" ")[1] for line in out.stdout.splitlines() if "::" in line and " " in line and line.startswith("tests/")}
    assert outcomes == {
        "test_plan_by_id": "PASSED", "test_plan_by_object_with_a_budget_and_an_input": "PASSED",
        "test_the_agent_plans_without_calling_its_model": "PASSED", "test_check_names_every_failure": "FAILED",
        "test_unknown_id": "FAILED", "test_network_refused": "PASSED", "test_each_example[short]": "PASSED",
        "test_each_example[long]": "PASSED", "test_no_examples[no-examples]": "SKIPPED",
    }, text
    assert "AssertionError: 3 expectation(s) of 'reply' (short) do not hold:" in text
    line = next(n for n, text in enumerate(TESTS.splitlines(), 1) if 'crux_plan("reply").check(' in text)
    assert f"tests/test_plans.py:{line}: expect().includes('brand-voice') does not hold: `brand-voice` dropped (budget); `brand-voice` left: budget 150, priority 30 < `style-examples` 45" in text
    assert "expect().tool('lookup_ordr') is invalid; the prompt has no tool 'lookup_ordr'; did you mean 'lookup_order'?" in text
    assert "expect().tokens(max=5) does not hold: " in text
    assert "LookupError: no prompt or agent with id 'replyy' in " in text and "known ids: caller, helper, needy, reply" in text
    assert "'needy' has no examples (and its input has required fields): add examples={...} to its definition" in text


def test_a_suite_that_does_not_use_the_plugin_does_not_load_the_library(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("import sys\n\ndef test_plain():\n    assert not [m for m in sys.modules if m.startswith('crux_devtools.') and m != 'crux_devtools.pytest_plugin']\n")
    out = run_pytest(tmp_path, "-q")
    assert out.returncode == 0, out.stdout + out.stderr
