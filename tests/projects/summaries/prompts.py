"""Summaries as `check` and the inspector see them: what `generate` prepares before sending is
prepared for the plan (extractive) or named (a model's); only `on_miss="fail"` warns."""

from crux_devtools import InputBudget, ModelCapacityProfile, ScriptedModel, agent, context, offloadable, prompt, summarizable, summarize

CAPACITY = ModelCapacityProfile(100_000, 1_000, "exact")


def ci_log() -> str:
    lines = [f"2026-11-29T10:{i // 60:02d}:{i % 60:02d}Z tests/test_module_{i:03d}.py .................... [ok]" for i in range(300)]
    lines.insert(250, "2026-11-29T10:04:10Z FAILED tests/test_auth.py::test_token_refresh - AssertionError: 'stalled' != 'renewed'")
    return "## CI log\n" + "\n".join(lines)


def ladder(id: str, **options: object) -> object:
    return offloadable(summarizable(context(id, priority=50, system=ci_log()), **options), above_tokens=100)  # type: ignore[arg-type]


def triage(id: str, log: object, budget: int) -> object:
    p = prompt(f"{id}-prompt", system="You explain CI failures.", use=[log], prompt="Why did CI fail?", examples={"default": {}})
    return agent(id, prompt=p, model=ScriptedModel(["It failed."], capacity=CAPACITY), input_budget=InputBudget(max=budget))


# generate prepares the extractive summary before sending: so does the inspector, and it is what is sent.
extractive = triage("extractive", ladder("ci-log", strategy=summarize.extractive(0.3)), 3000)

# A summary by a model: generate prepares it with that model before sending; check does not call it.
summarizer = ScriptedModel(["CI failed in test_token_refresh: the token was not renewed."] * 8, name="summarizer", capacity=CAPACITY)
by_model = triage("by-model", ladder("ci-log-by-model", model=summarizer), 3000)

# on_miss="fail": generate raises unless the summary store it is given has the summary: a warning.
strict = triage("strict", ladder("ci-log-strict", on_miss="fail"), 3000)

# No representation of the log fits 60 tokens: too large, whatever is prepared.
hopeless = triage("hopeless", ladder("ci-log-hopeless"), 60)
