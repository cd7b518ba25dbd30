"""Pure render functions for recorded runs (the run shape: ``core/record/runstore.py``): the Runs list rows and a run's detail.

They read run dicts as the runs store returns them (a RunSummary for the list, the whole run with its
``steps`` for the detail) and never re-derive what the core decided. Every string that comes from the
run (input, system text, messages, tool output, errors) goes into a ``rich.text.Text``, never parsed
as markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import json
from datetime import datetime
from typing import Any

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..core.plan.rungs import label
from ..core.record.live import step_stream_text
from ..core.record.pricing import cache_usage_text
from ..inspector.features.runs.costs import format_usd, format_usd_column
from ..inspector.features.runs.text import input_tokens as sent_tokens
from ..inspector.features.runs.text import NOT_PLANNED, local_datetime, run_planned, step_count, step_planned, step_tokens_or_not_planned, tokens_or_not_planned
from ..inspector.features.shown.sent import SYSTEM_KINDS, SentPart, cut_system
from ..inspector.features.shown.visible import visible_tree
from .error_render import error_line as error_line  # re-exported: the run views read it here
from .error_render import render_error
from .report import RUNG_STYLE

# The canonical tool output is what the application got, not what was sent: shown up to this many
# characters (what the model saw, ``model_output``, and everything in ``sent`` are shown in full).
OUTPUT_SHOWN = 1_500
OUTPUT_LINES = 12
# Any one text of what was sent (a part of the system text, a message, a tool's model output) is
# shown up to this many characters: a terminal takes seconds to lay out a megabyte. The rest is
# named, never silently dropped.
SENT_SHOWN = 60_000

STATUS_LOOK = {
    "ok": ("✓ ok", "green"),
    "error": ("✗ error", "bold red"),
    "max_steps": ("▲ max_steps", "bold yellow"),
}
ROLE_STYLE = {"system": "blue", "user": "magenta", "assistant": "green", "tool": "cyan"}
RUN_COLUMNS = ("Time", "Target", "Origin", "Status", "Steps", "Input tok", "Usage in/out", "Duration", "Cost")


# -- small formatters ---------------------------------------------------------------------------
def fmt_int(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "—" if value is None else str(value)


def fmt_time(started_at: Any, now: datetime | None = None) -> str:
    """``14:03:07`` for a run of today (local time), ``11-28 14:03`` for an older one."""
    when = local_datetime(started_at)
    if when is None:
        return str(started_at or "?")
    today = (now or datetime.now().astimezone()).date()
    return when.strftime("%H:%M:%S") if when.date() == today else when.strftime("%m-%d %H:%M")


def fmt_started(started_at: Any) -> str:
    """``2026-11-30 09:00:00`` in local time (the recorded ISO text when it cannot be read)."""
    when = local_datetime(started_at)
    return when.strftime("%Y-%m-%d %H:%M:%S") if when is not None else str(started_at or "?")


def fmt_duration(ms: Any) -> str:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return "—"
    if ms < 1_000:
        return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{int(ms // 60_000)} m {int(ms % 60_000 // 1000):02d} s"


def fmt_usage(usage: Any) -> str:
    """Provider-reported usage as ``in/out`` (with the cache reads and writes when there are any),
    or ``—`` when the provider reported none."""
    if not isinstance(usage, dict):
        return "—"
    cache = cache_usage_text(usage)
    return f"{fmt_int(usage.get('input_tokens'))}/{fmt_int(usage.get('output_tokens'))}" + (f" ({cache})" if cache else "")


def status_text(status: Any) -> Text:
    label, style = STATUS_LOOK.get(str(status), (str(status or "?"), "yellow"))
    return Text(label, style=style)


def as_json(value: Any) -> str:
    """A value as indented JSON (a string stays itself; what JSON cannot hold shows as its repr)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def compact_json(value: Any) -> str:
    """A value as the runtime shows it to a model: compact JSON (its repr when JSON cannot hold it)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):
        return repr(value)


def one_line(value: Any, limit: int = 120) -> str:
    text = " ".join(as_json(value).split()) if not isinstance(value, str) else " ".join(value.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def capped(text: str, limit: int = OUTPUT_SHOWN, lines: int = OUTPUT_LINES) -> Text:
    """``text`` up to ``limit`` characters and ``lines`` lines, and a line saying how much more there is."""
    cut = len(text) if len(text) <= limit else limit
    newlines = [i for i, ch in enumerate(text[:cut]) if ch == "\n"]
    if len(newlines) >= lines:
        cut = newlines[lines - 1]
    if cut >= len(text):
        return Text(text)
    shown = Text(text[:cut])
    shown.append(f"\n… {len(text) - cut:,} more characters not shown here (`crux-devtools runs --json` has them)", "dim italic")
    return shown


def sent_text(text: str, limit: int = SENT_SHOWN) -> Text:
    """What was sent, in full up to ``limit`` characters; past it, a line says how much more was sent."""
    if len(text) <= limit:
        return Text(text)
    shown = Text(text[:limit])
    shown.append(f"\n… {len(text) - limit:,} more characters were sent; not shown here (`crux-devtools runs --json` has them)", "dim italic")
    return shown


def indent(renderable: RenderableType, left: int = 2) -> Padding:
    return Padding(renderable, (0, 0, 0, left))


def section(title: str, detail: str = "", style: str = "bold") -> Rule:
    label = Text(title, style=style)
    if detail:
        label.append(f" · {detail}", "dim")
    return Rule(label, align="left", style="grey50")


# -- the Runs list --------------------------------------------------------------------------------
def cost_column(runs: list[dict[str, Any]]) -> list[str]:
    """The Cost column of ``runs``: one precision for all (``format_usd_column``)."""
    return format_usd_column([run.get("cost_usd") if isinstance(run.get("cost_usd"), (int, float)) else None for run in runs])


def run_row(run: dict[str, Any], now: datetime | None = None, cost_text: str | None = None) -> tuple[Text, ...]:
    """The cells of one row of the Runs table, in ``RUN_COLUMNS`` order; ``cost_text`` is the Cost
    cell as its column shows it (``cost_column``), else the run's own."""
    run = visible_tree(run, lines=False)  # every recorded string: control characters shown, not obeyed
    steps = step_count(run)
    input_tokens = sent_tokens(run) if run.get("input_tokens") is not None or run.get("steps") else None
    target = Text(str(run.get("target") or "?"), style="bold")
    cost = run.get("cost_usd") if isinstance(run.get("cost_usd"), (int, float)) else None  # set by the Runs tab from its prices
    if run.get("kind") == "agent":
        target.append(" agent", "italic cyan")
    if run.get("parent"):
        target.append(" ↳ replay", "dim")  # short, so the Cost column stays on screen; the preview says of which step of which run
    return (
        Text(fmt_time(run.get("started_at"), now)),
        target,
        Text(str(run.get("origin") or "?"), style="dim" if run.get("origin") == "app" else "cyan"),
        status_text(run.get("status")),
        Text(fmt_int(steps), justify="right"),
        Text(fmt_int(input_tokens), justify="right") if run_planned(run) else Text(NOT_PLANNED, style="dim", justify="right"),
        Text(fmt_usage(run.get("usage")), justify="right"),
        Text(fmt_duration(run.get("duration_ms")), justify="right"),
        Text(cost_text if cost_text is not None else format_usd(cost), justify="right", style="dim" if cost is None else ""),
    )


def render_run_preview(run: dict[str, Any] | None) -> RenderableType:
    """Under the table: the highlighted run's source, its error (or answer) and its input, a line each."""
    if run is None:
        return Text("")
    run = visible_tree(run, lines=False)
    where = str(run.get("file") or "")
    if where and run.get("line"):
        where += f":{run['line']}"
    replay = f"  replay of step {run.get('fork_step')} of run {run['parent']}" if run.get("parent") else ""
    lines = [Text.assemble((str(run.get("target") or "?"), "bold"), (replay, "cyan"), (f"  {where}" if where else "", "dim"), (f"  model {run.get('model') or '?'}", "dim"), (f"  run {run.get('id')}", "dim"))]
    if run.get("error"):
        lines.append(error_line(run["error"]))
    elif run.get("text") is not None:
        lines.append(Text.assemble(("answer: ", "bold green"), one_line(run["text"], 400)))
    lines.append(Text.assemble(("input: ", "dim"), one_line(run.get("input"), 400)))
    for line in lines:
        line.no_wrap, line.overflow = True, "ellipsis"
    return Group(*lines)


# -- a run's detail ---------------------------------------------------------------------------------
def step_label(step: dict[str, Any]) -> Text:
    """The step's line in the detail's step list: ``Step 0  ✓ 2,067 tok``."""
    step = visible_tree(step, lines=False)
    receipt = step.get("request") or {}
    label = Text()
    label.append(f"Step {step.get('index', '?')} ", "bold")
    if step.get("error"):
        label.append("✗ ", "bold red")
    elif step.get("tool_calls"):
        label.append("→ ", "cyan")
    else:
        label.append("✓ ", "green")
    label.append(f"{fmt_int(receipt.get('input_tokens'))} tok" if step_planned(step) else NOT_PLANNED, "dim")
    return label


def render_run_header(run: dict[str, Any]) -> RenderableType:
    """The run as a whole: what ran, how it ended, on what input, and its answer or error."""
    run = visible_tree(run)
    items: list[RenderableType] = []
    title = Text.assemble((str(run.get("target") or "?"), "bold"), (f" {run.get('kind') or ''}", "italic cyan"), "  ", status_text(run.get("status")))
    where = str(run.get("file") or "")
    if where:
        title.append(f"  {where}" + (f":{run['line']}" if run.get("line") else ""), "dim")
    items.append(title)
    steps = [s for s in run.get("steps") or [] if isinstance(s, dict)]
    ours = sent_tokens({"steps": steps})
    # each fact whole on one line, as many to a line as the width holds (a grid of fixed columns
    # wrapped its cells mid-word in an 80-column terminal)
    pieces = [
        Text.assemble("run ", (str(run.get("id") or "?"), "bold")),
        Text.assemble("origin ", (str(run.get("origin") or "?"), "bold")),
        Text.assemble("model ", (str(run.get("model") or "?"), "bold")),
        Text.assemble("started ", (fmt_started(run.get("started_at")), "bold")),
        Text.assemble("duration ", (fmt_duration(run.get("duration_ms")), "bold")),
        Text.assemble("steps ", (str(len(steps)), "bold")),
        Text.assemble("input tokens (ours) ", (fmt_int(ours) if run_planned(run) else tokens_or_not_planned(run), "bold")),
        Text.assemble("provider usage in/out ", (fmt_usage(run.get("usage")), "bold")),
    ]
    if isinstance(run.get("cost_usd"), float):
        pieces.append(Text.assemble("cost ", (format_usd(run["cost_usd"]), "bold")))
    for piece in pieces:
        piece.stylize("dim", 0, piece.plain.index(" ") if " " in piece.plain else 0)
        piece.no_wrap, piece.overflow = True, "ellipsis"
    items.append(Columns(pieces, padding=(0, 2)))
    items.append(Text.assemble(("input ", "dim"), Text(one_line(run.get("input"), 1_000))))
    error = run.get("error")
    if error:
        # the traceback is shown with the step that failed; a run that failed before any step
        # was dispatched (planning raised) shows it here
        failed_step = any(s.get("error") for s in steps)
        items.extend(render_error(error, block=False, indent=2, site=True) if not failed_step else [error_line(error, site=True)])
    if run.get("text") is not None:
        items.append(Text.assemble(("answer ", "bold green"), Text(str(run["text"]))))
    return Group(*items)


def system_pieces(system: str, contributions: list[dict[str, Any]]) -> list[SentPart]:
    """``system`` (the text as sent) cut at each contribution's ``span`` by ``inspector.sent.cut_system``,
    in order, keeping every character: the pieces joined give back ``system`` exactly (spans past a
    cut text are clipped, and one that starts past its end is left out). A piece's ``contribution``
    is ``None`` for separator text that belongs to no part."""
    return [part for part in cut_system(system, contributions) if part.span is None or part.span[0] <= len(system)]


def rung_label(contribution: Mapping[str, Any]) -> Text:
    """``authored (catalog-index)``, ``offload · handle ofl_…``, ``full``: the rung a part was sent at."""
    rung = str(contribution.get("representation") or "full")
    shown = Text(label(rung), style=RUNG_STYLE.get(rung, "bold"))
    if contribution.get("variant"):
        shown.append(f" ({contribution['variant']})", RUNG_STYLE.get(rung, ""))
    if contribution.get("handle"):
        shown.append(f" · preview + handle {contribution['handle']}", "magenta")
    return shown


def part_rule(contribution: Mapping[str, Any]) -> Rule:
    title = Text(str(contribution.get("contributor") or "?"), style="bold")
    title.append(f" · {contribution.get('kind') or '?'} · ", "dim")
    title.append_text(rung_label(contribution))
    title.append(f" · {fmt_int(contribution.get('tokens'))} tok", "dim")
    if contribution.get("tools"):
        title.append(" · tools " + ", ".join(map(str, contribution["tools"])), "dim")
    return Rule(title, align="left", style=RUNG_STYLE.get(str(contribution.get("representation")), "blue"))


def render_system_text(system: str, contributions: list[dict[str, Any]]) -> list[RenderableType]:
    items: list[RenderableType] = []
    for piece in system_pieces(system, contributions):
        text = piece.text or ""
        if piece.contribution is None:
            if text.strip():  # separators are blank lines; anything else is shown as it was sent
                items.append(Rule(Text("(between parts)", style="dim"), align="left", style="grey30"))
                items.append(indent(sent_text(text)))
            continue
        items.append(part_rule(piece.contribution))
        items.append(indent(sent_text(text) if text else Text("(empty)", style="dim")))
    if not system:
        items.append(indent(Text("(no system text)", style="dim")))
    # parts that were not in the system text: omitted rungs, and the user prompt, messages and tools
    for c in contributions:
        if c.get("span") is None and c.get("kind") in SYSTEM_KINDS:
            items.append(Text.assemble("  ", (str(c.get("contributor") or "?"), "bold dim"), (" · ", "dim"), rung_label(c), (" · not in the system text", "dim")))
    return items


def message_text(message: dict[str, Any]) -> list[RenderableType]:
    role = str(message.get("role") or "?")
    head = Text(role, style=f"bold {ROLE_STYLE.get(role, '')}")
    if message.get("tool_call_id"):
        head.append(f" (reply to {message['tool_call_id']})", "dim")
    if message.get("name"):
        head.append(f" name {message['name']}", "dim")
    items: list[RenderableType] = [head]
    content = message.get("content")
    if content is not None:
        items.append(indent(sent_text(content if isinstance(content, str) else as_json(content))))
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            name, args = function.get("name"), function.get("arguments")
        else:
            name, args = (call or {}).get("name"), (call or {}).get("arguments")
        items.append(indent(Text.assemble(("→ ", "cyan"), (str(name), "bold cyan"), ("(", "cyan"), Text(args if isinstance(args, str) else as_json(args)), (")", "cyan"), (f"  {call.get('id', '')}", "dim"))))
    extra = {k: v for k, v in message.items() if k not in ("role", "content", "tool_calls", "tool_call_id", "name")}
    if extra:
        items.append(indent(Text(as_json(extra), style="dim")))
    return items


def render_tools_sent(tools: list[dict[str, Any]], tool_tokens: dict[str, Any]) -> list[RenderableType]:
    items: list[RenderableType] = []
    for t in tools:
        name = str(t.get("name") or "?")
        head = Text.assemble((name, "bold cyan"), (f" · {fmt_int(tool_tokens.get(name))} tok", "dim"))
        items.append(head)
        if t.get("description"):
            items.append(indent(Text(str(t["description"]))))
        items.append(indent(Text(as_json(t.get("parameters")), style="dim")))
    return items


def render_sent(step: dict[str, Any]) -> list[RenderableType]:
    """What was sent, literally: the system text part by part with its rung, the messages, the tools."""
    sent = step.get("sent") or {}
    receipt = step.get("request") or {}
    contributions = list(receipt.get("contributions") or [])
    by_kind: dict[str, int] = {}
    for c in contributions:
        by_kind[str(c.get("kind"))] = by_kind.get(str(c.get("kind")), 0) + int(c.get("tokens") or 0)
    system = str(sent.get("system") or "")
    in_text = [c for c in contributions if c.get("span") is not None]
    items: list[RenderableType] = [
        section("System text", f"{len(system):,} characters · {len(in_text)} part(s)", "bold blue"),
        *render_system_text(system, contributions),
    ]
    messages = sent.get("messages") or []
    tokens = by_kind.get("messages", 0) + by_kind.get("user-prompt", 0)
    items.append(section("Messages", f"{len(messages)} · {tokens:,} tok" if tokens else f"{len(messages)}", "bold magenta"))
    for message in messages:
        items.extend(message_text(message if isinstance(message, dict) else {"content": message}))
    tools = sent.get("tools") or []
    tool_tokens = receipt.get("tool_tokens") or {}
    total = sum(int(v or 0) for v in tool_tokens.values()) if isinstance(tool_tokens, dict) else 0
    items.append(section("Tools", f"{len(tools)} · {total:,} tok" if tools else "none offered", "bold cyan"))
    items.extend(render_tools_sent(tools, tool_tokens if isinstance(tool_tokens, dict) else {}))
    if sent.get("max_tokens") is not None:
        items.append(Text.assemble(("max_tokens ", "dim"), (str(sent["max_tokens"]), "bold")))
    return items


def candidates_table(candidates: Sequence[Mapping[str, Any]]) -> Table:
    table = Table(expand=True, box=None, header_style="bold", pad_edge=False)
    for column in ("Contributor", "Rung", "Tokens", "Request", "Result"):
        table.add_column(column, justify="right" if column in ("Tokens", "Request") else "left")
    for c in candidates:
        rung = Text(label(c.get("representation")) or "?", style=RUNG_STYLE.get(str(c.get("representation")), ""))
        if c.get("variant"):
            rung.append(f" ({c['variant']})")
        if c.get("selected"):
            result = Text("selected", style="bold green")
        else:
            result = Text(f"rejected: {label(c.get('rejection_reason')) or '?'}", style="dim")
            if c.get("detail"):
                result.append(f" — {c['detail']}", "dim italic")
        if not c.get("available", True):
            result.append(" (not available)", "dim")
        table.add_row(Text(str(c.get("contributor") or "?")), rung, Text(fmt_int(c.get("tokens"))), Text(fmt_int(c.get("input_tokens"))), result)
    return table


def render_planner(receipt: dict[str, Any]) -> list[RenderableType]:
    """What the planner decided and why: limits, adaptations, budget drops, candidates, warnings."""
    limits = Text()
    for label, key in (("input", "input_tokens"), ("max", "max_input_tokens"), ("optimize at", "optimize_at")):
        limits.append(f"{label} ", "dim")
        limits.append(fmt_int(receipt.get(key)), "bold")
        limits.append("  ")
    for label, key in (("tier", "tier"), ("token budget", "token_budget"), ("measurement", "measurement"), ("epoch", "epoch"), ("request", "id"), ("previous", "previous_request_id")):
        if key in receipt:
            limits.append(f"{label} ", "dim")
            limits.append("none" if receipt[key] is None else str(receipt[key]))
            limits.append("  ")
    items: list[RenderableType] = [section("Planner", "what it decided and why", "bold yellow"), limits]
    adaptations = receipt.get("adaptations") or []
    line = Text("adaptations: ", style="dim")
    if not adaptations:
        line.append("none (every part at full fidelity)")
    for n, a in enumerate(adaptations):
        line.append(", " if n else "")
        line.append(str(a.get("contributor") or "?"), "bold")
        line.append(" → ")
        line.append_text(rung_label(a))
        line.append(f" ({fmt_int(a.get('full_tokens'))}→{fmt_int(a.get('selected_tokens'))} tok)", "dim")
    items.append(line)
    for d in receipt.get("dropped") or []:
        items.append(Text.assemble(("dropped before planning: ", "red"), (str(d.get("id") or "?"), "bold red"), (f" p{d.get('priority')} · {fmt_int(d.get('tokens'))} tok · {d.get('reason') or '?'}", "red")))
    for warning in receipt.get("warnings") or []:
        items.append(Text.assemble(("⚠ ", "yellow"), (str(warning), "yellow")))
    if receipt.get("candidates"):
        items.append(candidates_table(receipt["candidates"]))
    return items


def render_response(step: dict[str, Any]) -> list[RenderableType]:
    """What came back: the text, the tool calls, their results (canonical and as the model saw them), offloads."""
    items: list[RenderableType] = [section("Response", "", "bold green")]
    if step.get("response_text") is not None:
        items.append(indent(sent_text(str(step["response_text"]))))
    elif not step.get("tool_calls"):
        items.append(indent(Text("(no text)", style="dim")))
    for call in step.get("tool_calls") or []:
        call = call if isinstance(call, dict) else {"name": repr(call)}
        items.append(Text.assemble(("→ tool call ", "cyan"), (str(call.get("name") or "?"), "bold cyan"), ("(", "cyan"), Text(one_line(call.get("arguments"), 2_000)), (")", "cyan"), (f"  {call.get('id') or ''}", "dim")))
    for result in step.get("tool_results") or []:
        result = result if isinstance(result, dict) else {"output": result}
        items.append(Text.assemble(("← result of ", "cyan"), (str(result.get("name") or "?"), "bold cyan"), (f"  {result.get('call_id') or ''}", "dim")))
        output = result.get("output")
        output_text = output if isinstance(output, str) else compact_json(output)
        model_output = result.get("model_output")
        if model_output is not None and str(model_output) != output_text:
            items.append(indent(Text("output (what the application got):", style="dim")))
            items.append(indent(capped(output_text), 4))
            items.append(indent(Text("model_output (what the model was shown):", style="dim")))
            items.append(indent(sent_text(str(model_output)), 4))
        else:
            items.append(indent(Text("output (the model was shown the same):", style="dim")))
            items.append(indent(capped(output_text), 4))
    for off in step.get("offloads") or []:
        items.append(Text.assemble(("offloaded ", "magenta"), (str(off.get("handle") or "?"), "bold magenta"), (f" r{off.get('revision', '?')} · {fmt_int(off.get('byte_size'))} bytes", "magenta"), (f" · from {off.get('source')}" if off.get("source") else "", "dim")))
    return items


def render_step_outcome(step: dict[str, Any]) -> RenderableType:
    """One step's tokens (ours beside the provider's), the planner's decisions, what came back, and
    its error with traceback: the short half of a step, shown above what was sent."""
    step = visible_tree(step)
    receipt = step.get("request") or {}
    head = Text()
    head.append(f" Step {step.get('index', '?')} ", "bold reverse")
    head.append("  ")
    if step_planned(step):
        head.append(f"{fmt_int(receipt.get('input_tokens'))} input tokens", "bold")
        head.append(" (ours)", "dim")
    else:
        head.append(f"input tokens {step_tokens_or_not_planned(step)}", "bold")
    usage = step.get("usage")
    head.append("  provider usage ", "dim")
    if isinstance(usage, dict):
        head.append(f"in {fmt_int(usage.get('input_tokens'))} · out {fmt_int(usage.get('output_tokens'))}", "bold")
    else:
        head.append("not reported", "dim")
    head.append(f"  latency {fmt_duration(step.get('latency_ms'))}", "dim")
    streamed = step_stream_text(step)  # a streamed step: time to first token, tokens per second
    if streamed is not None:
        head.append(f"  {streamed}", "dim")
    if isinstance(step.get("cost_usd"), float):  # set by the Runs tab when the model has a price
        head.append(f"  cost {format_usd(step['cost_usd'])}", "dim")
    items: list[RenderableType] = [head]
    error = step.get("error")
    items.extend(render_planner(receipt))
    items.extend(render_response(step))
    if error:
        items.append(section("Error", "", "bold red"))
        items.extend(render_error(error, block=False, indent=2))
    return Group(*items)


def render_step_sent(step: dict[str, Any]) -> RenderableType:
    step = visible_tree(step)
    title = Text()
    title.append(f" Sent in step {step.get('index', '?')} ", "bold reverse")
    title.append("  exactly what the model received", "dim")
    return Group(title, *render_sent(step))


def render_step(step: dict[str, Any]) -> RenderableType:
    """One step in full: its outcome, then what was sent."""
    return Group(render_step_outcome(step), Text(""), render_step_sent(step))


def render_run_detail(run: dict[str, Any], step_index: int | None) -> RenderableType:
    """The run's header, then the chosen step (``None``: the run has no step)."""
    items: list[RenderableType] = [render_run_header(run)]
    steps = run.get("steps") or []
    if step_index is not None and 0 <= step_index < len(steps):
        items.append(Text(""))
        items.append(render_step(steps[step_index]))
    elif not steps:
        items.append(no_steps_text())
    return Group(*items)


def no_steps_text() -> Text:
    return Text("No step was dispatched: the run ended before its first model call.", style="dim italic")
