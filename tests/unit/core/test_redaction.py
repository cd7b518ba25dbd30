"""``redact_values`` removes a value from a recorded run wherever it went: the input, every step's
``sent`` system text and messages, tool arguments and results, the final text and errors. Checked
on the bytes of a real runs database."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from crux_devtools import ModelCapacityProfile, RunError, ScriptedModel, agent, context, generate, prompt, record_runs, redact_values, tool, tool_call
from crux_devtools.core.record.redaction import scrub
from crux_devtools.core.record.runstore import RunStore

CARD = "4111 1111 1111 1111"
NAME = 'Zoë "Z" Ørsted'
API_KEY = "sk-test-2b9f7c1d"


class Payment(BaseModel):
    card_number: str
    holder: str
    question: str = "Was I charged twice?"


class Lookup(BaseModel):
    card_number: str


def _charges(args: Lookup) -> dict:
    return {"card": args.card_number, "holder": NAME, "charges": [12.5, 12.5], "note": f"two charges on {args.card_number}"}


def _refund(args: Lookup) -> str:
    raise PermissionError(f"refunds for {args.card_number} need a supervisor (key {API_KEY})")


charges = tool("charges", description="Charges on a card.", parameters=Lookup, execute=_charges)
refund = tool("refund", description="Refund a card.", parameters=Lookup, execute=_refund)
card_ctx = context("card", priority=50, input=Payment, system=lambda i: f"## Card on file\n{i.card_number} held by {i.holder}")
billing = prompt("billing", system="You answer billing questions.", input=Payment, use=[card_ctx], tools=[charges, refund],
                 prompt=lambda i: f"{i.question} (card {i.card_number})")
CAPACITY = ModelCapacityProfile(8000, 500, "exact")
INPUT = {"card_number": CARD, "holder": NAME}


def crux_bytes(folder: Path) -> bytes:
    """Every byte the recorder left on disk: the database and its journal files."""
    return b"".join(p.read_bytes() for p in sorted((folder / ".crux").iterdir()) if p.is_file())


def forms(value: str) -> list[bytes]:
    return [value.encode(), json.dumps(value)[1:-1].encode(), json.dumps(value, ensure_ascii=False)[1:-1].encode()]


def test_a_secret_input_appears_nowhere_in_the_stored_runs(tmp_path: Path) -> None:
    ok_model = ScriptedModel([[tool_call("charges", {"card_number": CARD})], f"Card {CARD} ({NAME}) was charged twice; I will ask for a refund."], capacity=CAPACITY)
    failing_model = ScriptedModel([[tool_call("refund", {"card_number": CARD})]], capacity=CAPACITY)
    with record_runs(tmp_path, redact=redact_values(API_KEY, input_fields=["card_number", "holder"])) as recorder:
        result = generate(agent("billing-agent", prompt=billing, model=ok_model), input=INPUT)
        with pytest.raises(RunError):
            generate(agent("billing-agent", prompt=billing, model=failing_model), input=INPUT)
    assert recorder.written == 2 and recorder.failure is None
    # The secret really went everywhere: the system text, the messages, the tool call, the tool result, the answer.
    assert CARD in ok_model.requests[0].system and CARD in ok_model.requests[0].messages[0]["content"]
    assert CARD in ok_model.requests[1].messages[-1]["content"] and CARD in (result.text or "")
    raw = crux_bytes(tmp_path)
    assert b"billing-agent" in raw  # the runs are there
    for secret in (CARD, NAME, API_KEY):
        for form in forms(secret):
            assert form not in raw, (secret, form)
    store = RunStore.for_project(tmp_path)
    try:
        runs = [store.get(r["id"]) for r in store.list()]
    finally:
        store.close()
    done = next(r for r in runs if r["status"] == "ok")
    step = done["steps"][0]
    card = next(c for c in step["request"]["contributions"] if c["contributor"] == "card")
    start, end = card["span"]
    assert step["sent"]["system"][start:end] == "## Card on file\n" + "*" * len(CARD) + " held by " + "*" * len(NAME)  # spans still exact
    assert done["input"]["card_number"] == "*" * len(CARD) and done["input"]["question"] == "Was I charged twice?"
    failed = next(r for r in runs if r["status"] == "error")
    assert failed["error"]["type"] == "PermissionError" and "need a supervisor" in failed["error"]["message"]


def test_scrub_masks_short_values_as_words_and_keeps_the_recorders_identifiers() -> None:
    run = {"id": "run-4111", "input": {"pin": "41", "note": "pin 41 is 4111"}, "steps": [{"request": {"id": "req_4111"}, "text": "41"}]}
    out = scrub(run, ["41", "4111"], replacement="[redacted]")
    assert out == {"id": "run-4111", "input": {"pin": "[redacted]", "note": "pin [redacted] is [redacted]"},
                   "steps": [{"request": {"id": "req_4111"}, "text": "[redacted]"}]}
    with pytest.raises(TypeError, match="non-empty string"):
        redact_values("")
    with pytest.raises(TypeError, match="input_fields"):
        redact_values(input_fields="card_number")


class Card(BaseModel):
    cvc: str
    pin: str
    digit: int
    question: str = "Is my card blocked?"


class Verify(BaseModel):
    cvc: str
    digit: int


def _verify(args: Verify) -> dict:
    return {"checked": {"cvc": args.cvc, "digit": args.digit}, "note": f"CVC {args.cvc} and digit {args.digit} match card v7371"}


verify = tool("verify", description="Check a card's CVC.", parameters=Verify, execute=_verify)
card_check = context("card-check", priority=50, input=Card, system=lambda i: f"## Card\nCVC {i.cvc}, PIN {i.pin}, digit {i.digit}; ref 7371-a737")
card_prompt = prompt("card", system="You check cards.", input=Card, use=[card_check], tools=[verify],
                     prompt=lambda i: f"{i.question} CVC {i.cvc} (pin {i.pin}, digit {i.digit})")


def test_short_field_values_are_masked_as_words_everywhere_in_a_stored_run(tmp_path: Path) -> None:
    """A 3-, 2- and 1-character field value (the last an int) is masked in the system text, the
    messages, the tool call's arguments, its result and the answer; "7371" and "a737" keep theirs."""
    model = ScriptedModel([[tool_call("verify", {"cvc": "737", "digit": 7})], "CVC 737 matches; digit 7 too."], capacity=CAPACITY)
    with record_runs(tmp_path, redact=redact_values(input_fields=["cvc", "pin", "digit"])) as recorder:
        generate(agent("card-agent", prompt=card_prompt, model=model), input={"cvc": "737", "pin": "42", "digit": 7})
    assert recorder.written == 1 and recorder.failure is None
    assert "CVC 737" in model.requests[0].system and '"cvc":"737"' in model.requests[1].messages[-1]["content"]  # it went everywhere
    store = RunStore.for_project(tmp_path)
    try:
        run = store.get(store.list()[0]["id"])
    finally:
        store.close()
    assert run is not None
    first, second = run["steps"]
    assert first["sent"]["system"].endswith("## Card\nCVC ***, PIN **, digit *; ref 7371-a737")  # bounded: words containing it stay
    assert "CVC *** (pin **, digit *)" in first["sent"]["messages"][0]["content"]
    assert first["tool_calls"][0]["arguments"] == {"cvc": "***", "digit": "*"}
    result = first["tool_results"][0]
    assert result["output"] == {"checked": {"cvc": "***", "digit": "*"}, "note": "CVC *** and digit * match card v7371"}
    assert second["sent"]["messages"][-1]["content"] == '{"checked":{"cvc":"***","digit":*},"note":"CVC *** and digit * match card v7371"}'  # as shown to the model
    assert second["response_text"] == run["text"] == "CVC *** matches; digit * too."
    assert run["input"] == {"cvc": "***", "pin": "**", "digit": "*", "question": "Is my card blocked?"}
    # the recorder's own figures (the id, the clock, latencies, the file's path) may hold "42" by chance
    own = {"id", "started_at", "duration_ms", "latency_ms", "file", "line"}

    def content(value: object) -> object:
        if isinstance(value, dict):
            return {k: content(v) for k, v in value.items() if k not in own}
        return [content(v) for v in value] if isinstance(value, list) else value

    text = json.dumps(content(run))
    for word in ("737", "42"):
        assert re.search(rf"(?<![\w]){word}(?![\w])", text) is None, word
    assert first["index"] == 0 and isinstance(first["request"]["input_tokens"], int)  # the recorder's own numbers are kept
