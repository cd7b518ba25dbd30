"""The extractive summary of a line-shaped source (a CI log) keeps its lines, its head, its tail and its failures."""

from __future__ import annotations

from pydantic import BaseModel

from crux_devtools import InputBudget, ScriptedModel, context, generate, offloadable, prompt, summarizable, summarize


def ci_log() -> str:
    """A GitHub-Actions-style pytest run: set-up noise, 240 passing tests, one failure, a summary, clean-up."""
    lines = [
        "2026-11-29T10:02:11.0412Z ##[group]Run actions/checkout@v4",
        "2026-11-29T10:02:11.0420Z Syncing repository: nimbus/sync-agent",
        "2026-11-29T10:02:12.8841Z ##[endgroup]",
        "2026-11-29T10:02:13.1002Z Run python -m pip install -e .[test]",
    ]
    lines += [f"2026-11-29T10:02:{14 + i // 10:02d}.{i:04d}Z Collecting package-{i}==1.{i}.0" for i in range(40)]
    lines += [
        "2026-11-29T10:02:31.5521Z Successfully installed nimbus-sync-agent-8.4.1",
        "2026-11-29T10:02:32.0001Z Run python -m pytest -q",
        "2026-11-29T10:02:33.1200Z ============================= test session starts ==============================",
        "2026-11-29T10:02:33.1201Z platform linux -- Python 3.12.7, pytest-8.3.3, pluggy-1.5.0",
        "2026-11-29T10:02:33.1202Z collected 241 items",
    ]
    lines += [f"2026-11-29T10:02:{34 + i // 20:02d}.{i:04d}Z tests/test_module_{i:03d}.py ....................  [{i * 100 // 240:3d}%]" for i in range(240)]
    lines += [
        "2026-11-29T10:03:02.4410Z =================================== FAILURES ===================================",
        "2026-11-29T10:03:02.4411Z __________________________ test_token_refresh_retries __________________________",
        "2026-11-29T10:03:02.4412Z     def test_token_refresh_retries():",
        "2026-11-29T10:03:02.4413Z         agent = SyncAgent(clock=FakeClock())",
        "2026-11-29T10:03:02.4414Z >       assert agent.refresh(expired_token()) == 'renewed'",
        "E       AssertionError: assert 'stalled' == 'renewed'",
        "2026-11-29T10:03:02.4416Z tests/test_auth.py:88: AssertionError",
        "2026-11-29T10:03:02.4417Z =========================== short test summary info ============================",
        "2026-11-29T10:03:02.4418Z FAILED tests/test_auth.py::test_token_refresh_retries - AssertionError: assert 'stalled' == 'renewed'",
        "2026-11-29T10:03:02.4419Z ======================== 1 failed, 240 passed in 29.41s ========================",
        "2026-11-29T10:03:02.6000Z ##[error]Process completed with exit code 1.",
    ]
    lines += [f"2026-11-29T10:03:03.{i:04d}Z Post job cleanup: removing cache entry {i}" for i in range(30)]
    return "\n".join(lines)


FAILURE = "FAILED tests/test_auth.py::test_token_refresh_retries - AssertionError: assert 'stalled' == 'renewed'"


def test_the_failure_line_of_a_ci_log_survives_with_the_head_and_tail_and_the_line_structure() -> None:
    log = ci_log()
    source_lines = log.splitlines()
    summary = summarize.extractive(0.2).summarize_text(log)
    kept = summary.splitlines()
    assert len(summary) < len(log) * 0.35
    assert any(FAILURE in line for line in kept)
    assert "E       AssertionError: assert 'stalled' == 'renewed'" in kept
    assert any("##[error]Process completed with exit code 1." in line for line in kept)
    assert kept[0] == source_lines[0] and kept[-1] == source_lines[-1]  # the head and the tail
    # Line structure: every kept line is a whole line of the source, in the source's order; gaps are marked.
    positions = [source_lines.index(line) for line in kept if not line.startswith("[... ")]
    assert positions == sorted(positions) and len(positions) > 20
    omitted = [line for line in kept if line.startswith("[... ")]
    assert omitted and all(line.endswith(" lines omitted ...]") for line in omitted)
    assert sum(int(line.split()[1]) for line in omitted) + len(positions) == len(source_lines)


def test_prose_is_still_summarised_by_lead_sentences() -> None:
    text = "\n\n".join(f"Point {i} is the lead. Detail {i} one. Detail {i} two." for i in range(6))
    summary = summarize.extractive(0.4).summarize_text(text)
    assert "omitted" not in summary and summary.splitlines()[0].startswith("Point 0 is the lead.")


class Question(BaseModel):
    question: str = "Why did CI fail?"


def test_generate_sends_the_failure_of_a_ci_log_when_the_log_is_summarised() -> None:
    log = context("ci-log", priority=40, system="## CI log\n" + ci_log())
    p = prompt("ci-triage", system="You explain CI failures.", input=Question,
               use=[offloadable(summarizable(log, strategy=summarize.extractive(0.2)))], prompt=lambda i: i.question)
    model = ScriptedModel(["The token refresh test failed."])
    result = generate(p, input={}, model=model, input_budget=InputBudget(max=3500))
    assert [(a.contributor, a.representation) for a in result.steps[0].request.adaptations] == [("ci-log", "summary")]
    assert FAILURE in model.requests[0].system
