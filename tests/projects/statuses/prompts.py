"""One prompt per status: every surface (web list and page, /api, TUI, inspect, check) must agree."""

from pydantic import BaseModel

from crux_devtools import InputBudget, ModelCapacityProfile, ScriptedModel, agent, context, match, prompt

EXACT = ModelCapacityProfile(100_000, 1_000, "exact")
MANUAL = " ".join(f"Step {i}: check cable {i} and restart router {i}." for i in range(400))


class Mode(BaseModel):
    mode: str = "reply"


class Order(BaseModel):
    order_id: int


def boom(_input):
    raise ValueError("the catalog service is down")


fine = prompt("fine", system="You are support.", model=EXACT, examples={"default": {}})

# No plan fits the model's 2,000-token window.
too_big = prompt("too-big", system="You are support.", use=[context("manual", system=MANUAL)],
                 model=ModelCapacityProfile(2_000, 100, "exact"), examples={"default": {}})

# The prompt's own text alone is over its token_budget.
wordy = prompt("wordy", system="You are support. " + " ".join(f"Rule {i} always applies." for i in range(60)),
               token_budget=50, model=EXACT, examples={"default": {}})

# A match key with no case: neither branch is sent.
modes = prompt(
    "modes", system="You are support.", input=Mode, model=EXACT,
    use=[match(lambda i: i.mode, {"reply": context("reply", system="Reply."), "triage": context("triage", system="Triage.")})],
    examples={"typo": {"mode": "replly"}},
)

# The example does not match the input schema.
orders = prompt("orders", system="Help with orders.", input=Order, model=EXACT, examples={"bad": {"order_id": "seven"}})

# User code raises while resolving.
broken = prompt("broken", system="You are support.", use=[context("catalog", system=boom)], model=EXACT, examples={"default": {}})

# Required inputs and no examples: nothing can be resolved.
unchecked = prompt("unchecked", system="Help with orders.", input=Order, model=EXACT)

# Nothing fits under optimize_at: the most faithful plan under max is sent (not a green "fits").
GUIDE = " ".join(f"Rule {i}: greet customer {i} by name." for i in range(150))
roomy = agent("roomy", prompt=prompt("roomy-prompt", system="You are support.", use=[context("guide", system=GUIDE)], examples={"default": {}}),
              model=ScriptedModel(["ok"]), input_budget=InputBudget(optimize_at=800, max=4000))
