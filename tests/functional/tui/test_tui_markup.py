"""User text that looks like Textual/Rich markup is shown literally in every pane and notification.

Ids, messages, tracebacks, prompt text, tool output and file names come from the user's project;
a stray ``[/]`` once crashed the TUI on start (``MarkupError`` in a toast), and ``[@click=...]``
would have been a live action link.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

sys.path.insert(0, str(Path(__file__).parents[2]))

from test_tui import SIZE, notifications, screen_text, settle  # noqa: E402
from tui_fakes import PREVIEW, FakeSession, Ticket  # noqa: E402

from crux_devtools import context, prompt  # noqa: E402
from crux_devtools.inspector.api import SessionEvent  # noqa: E402
from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.widgets.planning import render_planning  # noqa: E402
from crux_devtools.tui.widgets.tools import render_tools  # noqa: E402
from confirm_fake import fake_check_run  # noqa: E402

AGENT_ID = "checklist[/]-agent"  # ends in -agent: the fake session gives it a model
CTX_ID = "notes[bold]"
SYSTEM = "Say [bold]hi[/bold], then [/] and [@click=app.quit]quit[/]."
ERROR_MESSAGE = "KeyError('missing [/] section')"
TRACEBACK = 'File "a[/].py", line 3\n  raise KeyError("missing [/] section")'
TOOL_NAME = "look[/]up"
TOOL_OUTPUT = "row [red]1[/red] [/]"


def markup_prompt() -> Any:
    notes = context(CTX_ID, system=SYSTEM, priority=40)
    return prompt(
        AGENT_ID,
        system="Check the list [/] carefully.",
        input=Ticket,
        use=[notes],
        prompt=lambda i: i.message,
        examples={"ex[/]": {"message": "user [i]text[/i] [/]"}},
    )


class MarkupSession(FakeSession):
    """Every string the TUI can show carries markup-like text."""

    def __init__(self, *, fail_start: bool = False) -> None:
        super().__init__(root=Path("/proj[/]ect"), prompts=[markup_prompt()])
        self.fail_start = fail_start
        error = {"file": "a[/].py", "line": 3, "type": "Key[/]Error", "message": ERROR_MESSAGE, "traceback": TRACEBACK}
        self._report = self.decorate(self.build_report(errors=[error]))

    def decorate(self, report: dict[str, Any]) -> dict[str, Any]:
        for p in report["prompts"]:
            p["file"] = "src[/]/agent.py"
            p["tools"] = [TOOL_NAME]
            for ex in p["examples"]:
                ex["inspection"]["tools"] = [TOOL_NAME]
                ex["inspection"]["tool_sources"] = {TOOL_NAME: CTX_ID}
                ex["preview"] = markup_preview()
                ex["preview_error"] = {"code": "over[/]limit", "message": "too big [/]", "diagnostics": [{"contributor": CTX_ID, "tokens": 3, "message": "[/]"}]}
        return report

    async def start(self) -> None:
        await super().start()
        if self.fail_start:
            raise RuntimeError("worker [/] could not start")

    async def evaluate(self, prompt_id: str, **kwargs: Any) -> dict[str, Any]:
        report = await super().evaluate(prompt_id, **kwargs)
        report["preview"] = markup_preview()
        return report

    async def run(self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, confirm: Any = None) -> dict[str, Any]:
        asked = fake_check_run(self.report, prompt_id, confirm)
        if asked is not None:  # nothing runs: the front end must ask first
            return asked
        self.calls.append(("run", {"prompt_id": prompt_id, "example": example}))
        step = {
            "index": 0,
            "request": {"input_tokens": 5, "max_input_tokens": 50, "optimize_at": 50, "measurement": "m[/]", "epoch": 1,
                        "adaptations": [{"contributor": CTX_ID, "representation": "sum[/]mary"}], "warnings": ["warn [/]"]},
            "response_text": "reply [/] [bold]",
            "tool_calls": [{"name": TOOL_NAME, "arguments": {"q": "[/]"}}],
            "tool_results": [{"name": TOOL_NAME, "output": TOOL_OUTPUT}],
            "offloads": [{"handle": "off[/]", "byte_size": 3}],
        }
        return {"text": "answer [/] [@click=app.quit]x[/]", "steps": [step], "error": {"message": "boom [/]"}}


def markup_preview() -> dict[str, Any]:
    candidates = [{**c, "contributor": CTX_ID, "representation": "full[/]"} for c in PREVIEW["candidates"]]
    own = "Check the list [/] carefully."
    sent = {
        "system": f"{own}\n\n{SYSTEM}",
        "messages": [{"role": "user[/]", "content": "user [i]text[/i] [/]"}],
        "tools": [{"name": TOOL_NAME, "description": "find [b]rows[/b] [/]", "parameters": {"title": "Q[/]", "type": "object"}}],
        "max_tokens": None,
    }
    contributions = [
        {"contributor": "<prompt>", "kind": "prompt-system", "representation": "full", "tokens": 7, "tools": [], "span": [0, len(own)], "variant": None, "handle": None},
        {"contributor": CTX_ID, "kind": "ladder", "representation": "offload", "tokens": 9, "tools": [], "span": [len(own) + 2, len(sent["system"])], "variant": None, "handle": "ofl[/]"},
    ]
    return {
        **PREVIEW,
        "model": "gpt[/]",
        "status": "fits",
        "sent": sent,
        "contributions": contributions,
        "tool_tokens": {TOOL_NAME: 12},
        "candidates": candidates,
        "adaptations": [{"contributor": CTX_ID, "representation": "summary[/]", "full_tokens": 9, "selected_tokens": 3}],
        "tools": [TOOL_NAME],
        "warnings": ["careful [/]"],
        "breakdown": [{"contributor": CTX_ID, "kind": "ctx[/]", "representation": "full[/]", "tokens": 9}],
    }


def flat(text: str) -> str:
    return " ".join(text.split())


async def test_markup_in_ids_errors_and_text_is_shown_literally_in_every_pane() -> None:
    session = MarkupSession()
    app = make_tui(session)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert f"✓ {AGENT_ID} agent" in text  # the tree
        assert f"{CTX_ID}" in text
        assert f"agent  {AGENT_ID}  example ex[/]" in text  # the status line
        assert "Say [bold]hi[/bold], then [/] and [@click=app.quit]quit[/]." in text  # the system text as sent
        assert "user [i]text[/i] [/]" in text  # the user prompt
        assert "/proj[/]ect" in text  # the header's sub-title
        assert f"{CTX_ID} · ladder · offload preview · 9 tok · handle ofl[/]" in text  # the Request tab
        assert "user[/]" in text and "find [b]rows[/b] [/]" in text and '"title": "Q[/]"' in text
        for tab, expected in (
            ("tab-system", ["Say [bold]hi[/bold], then [/] and [@click=app.quit]quit[/].", "user [i]text[/i] [/]"]),
            ("tab-contributors", [CTX_ID]),
            ("tab-tools", [TOOL_NAME, CTX_ID]),
            ("tab-planning", ["gpt[/]", "full[/]", "summary[/]", "careful [/]", "ctx[/]", "too big [/]", "over[/]limit"]),
            ("tab-errors", ["a[/].py:3  Key[/]Error", ERROR_MESSAGE, 'raise KeyError("missing [/] section")']),
        ):
            app.query_one("#tabs").active = tab
            await settle(pilot)
            shown = screen_text(app)
            for piece in expected:
                assert piece in shown, (tab, piece)
        await pilot.press("r")  # run the agent: tool output, answer and error in the Runs tab
        await settle(pilot)
        shown = screen_text(app)
        for piece in ("boom [/]", TOOL_OUTPUT, "reply [/] [bold]", "answer [/] [@click=app.quit]x[/]", "warn [/]", "off[/]", "sum[/]mary"):
            assert piece in shown, piece
        assert any(AGENT_ID in n for n in notifications(app))
        assert app.is_running


async def test_markup_in_notifications_is_shown_literally() -> None:
    session = MarkupSession(fail_start=True)
    app = make_tui(session)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await settle(pilot)
        session.emit(SessionEvent("error", 2, "a[/].py:3: KeyError('missing [/] section')", ["a[/].py"], []))
        await settle(pilot)
        # read the error's toast now: it leaves the screen after its timeout, which a loaded machine can pass
        text = flat(screen_text(app))  # toasts are on screen: rendering them must not raise
        assert "worker [/] could not start" in text
        assert "missing [/] section" in text
        messages = notifications(app)
        session.emit(SessionEvent("report", 3, "src[/]/agent.py changed", ["src[/]/agent.py"], [AGENT_ID, "[bold]x"]))
        await settle(pilot)
        await pilot.press("o")  # "Source of ..." names the prompt's file
        await settle(pilot)
        flat(screen_text(app))
        messages += [m for m in notifications(app) if m not in messages]
        assert "RuntimeError: worker [/] could not start" in messages
        assert "a[/].py:3: KeyError('missing [/] section')" in messages
        assert f"src[/]/agent.py changed\nchanged: {AGENT_ID}, [bold]x" in messages
        assert any(m.startswith("src[/]/agent.py:") for m in messages)
        assert all(n.markup is False for n in app._notifications)
        assert app.is_running


@pytest.mark.parametrize("render", ["planning", "tools"])
def test_rich_tables_never_parse_user_text_as_markup(render: str) -> None:
    """Rich tables parse plain ``str`` cells as markup: every cell built from user data is a Text."""
    console = Console(width=200, record=True, color_system=None)
    example = {"inspection": {"tools": [TOOL_NAME], "tool_sources": {TOOL_NAME: "[/]"}}, "preview": markup_preview(), "preview_error": None, "summaries": []}
    if render == "planning":
        console.print(render_planning(example))
        shown = console.export_text()
        assert "full[/]" in shown and "ctx[/]" in shown and "gpt[/]" in shown
    else:
        console.print(render_tools({"tools": [TOOL_NAME]}, example))
        assert f"{TOOL_NAME} [/]" in flat(console.export_text())
