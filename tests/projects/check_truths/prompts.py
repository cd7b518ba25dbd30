"""What `check` must fail: each of these `generate` would refuse, or would silently send less than meant."""

from pydantic import BaseModel

from crux_devtools import InputBudget, ModelCapacityProfile, ScriptedModel, agent, context, match, prompt

MANUAL = " ".join(f"Step {i}: check cable {i} and restart router {i}." for i in range(400))


class Mode(BaseModel):
    mode: str = "reply"


# A plan over its input limit: generate raises REQUEST_TOO_LARGE before dispatch.
manual = context("manual", system=MANUAL)
too_big = agent(
    "too-big",
    prompt=prompt("too-big-prompt", system="You are support.", use=[manual], examples={"default": {}}),
    model=ScriptedModel(["never"], capacity=ModelCapacityProfile(100_000, 1_000, "exact")),
    input_budget=InputBudget(max=2000),
)

# The prompt's own text alone is over its token_budget: nothing left to drop.
wordy = prompt(
    "wordy",
    system="You are support. " + " ".join(f"Rule {i} always applies." for i in range(60)),
    token_budget=50,
    model=ModelCapacityProfile(100_000, 1_000, "exact"),
    examples={"default": {}},
)

# A match key with no case: neither branch is sent.
modes = prompt(
    "modes",
    system="You are support.",
    input=Mode,
    use=[match(lambda i: i.mode, {"reply": context("reply", system="Reply."), "triage": context("triage", system="Triage.")})],
    examples={"known": {"mode": "reply"}, "typo": {"mode": "replly"}},
)

# A prompt meant for a large model is planned against the profile it names, and passes.
large = prompt(
    "large",
    system="You are support.",
    use=[manual],
    model=ModelCapacityProfile(128_000, 4_000, "estimated"),
    examples={"default": {}},
)
