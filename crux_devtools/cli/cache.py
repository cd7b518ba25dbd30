"""``crux-devtools cache``: what the provider's prompt cache will be able to read, what breaks it, and
where it is defined, before the first call.

The project is loaded and every example planned in an isolated worker, as ``check`` does (no model
is called); each request is then planned a second time in the same worker, so what differs between
two evaluations of one input (a clock, a random id) is told apart from what follows the input.
The advice itself is ``review/cache_advice.py``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click

from .common import TIMEOUT_HELP, OneLineCommand, UsageFault, project


async def cache_document(root: Path, timeout: float, target: str | None, runs: int, model: str | None) -> dict[str, Any]:
    """The cache document of the project at ``root`` (``review/cache_advice.py``)."""
    from ..core.record.runstore import RunStore
    from ..inspector.session.discovery import read_model_config
    from ..inspector.session.service import ProjectSession
    from ..inspector.features.shown.cache_view import target_advice
    from ..review.cache_advice import document

    config, _errors = read_model_config(root)
    profiles: dict[str, Any] = dict(config.get("models") or {})
    if model is not None:
        if model not in profiles:
            known = ", ".join(sorted(profiles)) or "none (add [tool.crux-devtools.models.NAME] to pyproject.toml)"
            raise UsageFault(f"--model {model!r}: no model profile of that name in {root / 'pyproject.toml'}; known: {known}")
        profiles = {model: profiles[model]}
    session = ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, fork=False)
    try:
        await session.start()
        report = session.report
        if report is None:
            raise click.ClickException(f"{root}: the project was not loaded")
        prompts = list(report["prompts"])
        if target is not None:
            prompts = [p for p in prompts if p["id"] == target]
            if not prompts:
                known = ", ".join(p["id"] for p in report["prompts"]) or "none"
                raise UsageFault(f"--target {target!r}: no prompt or agent with that id; known ids: {known}")
        store = RunStore.for_project(root) if runs else None
        targets, economics = [], []
        for prompt in prompts:
            recorded = store.list(target=prompt["id"], limit=runs) if store is not None else []
            advice, costs = await target_advice(session, prompt, runs=recorded, profiles=profiles)
            targets.append(advice)
            economics.extend(costs)
        return document(targets, economics)
    finally:
        await session.stop()


def _usd(*amounts: Any) -> list[str]:
    """Sums shown side by side, with one precision."""
    from ..core.record.pricing import format_usd_column

    return format_usd_column(list(amounts))


def render_text(doc: dict[str, Any]) -> str:
    """The document for a terminal: a table of blocks per target, the prefix, the advice, the economics."""
    lines: list[str] = []
    for t in doc["targets"]:
        lines.append(f"{t['id']} ({t['kind']}): {t['requests']} request(s) planned, each twice")
        if not t["blocks"]:
            lines.append("  nothing to send: no example planned")
            continue
        width = max(len(b["id"]) for b in t["blocks"])
        for b in t["blocks"]:
            kind = b["class"] + (f" ({', '.join(b['fields'])})" if b["fields"] else "")
            where = f"{b['file']}:{b['line']}" if b["file"] else "-"
            lines.append(f"  {b['id']:<{width}}  {kind:<24} {b['tokens']:>7,} tokens  {where}  differs in {b['differs_in']}/{t['requests']}")
        lines.append(f"  cacheable prefix: {t['prefix_tokens']:,} tokens")
        if t["suggestion"]:
            lines.append(f"  suggestion: {t['suggestion']['text']}")
        if t["breakpoints"]:
            spots = "; ".join(("after the tools" if b["after"] == "tools" else f"at character {b['offset']:,} of the system text")
                              + f" ({b['tokens']:,} tokens, {b['ttl']})" for b in t["breakpoints"])
            lines.append(f"  cache = \"auto\" places: {spots}")
        else:
            lines.append("  cache = \"auto\" places no breakpoint: no prefix reaches the model's minimum")
    for p in doc["profiles"]:
        minimum = f"{p['cache_min_tokens']:,}" if p["cache_min_tokens"] is not None else "unknown"
        share = f"{p['break_even_read_share']:.0%}" if p["break_even_read_share"] is not None else "unpriced"
        cached, uncached = _usd(p["cost_per_1000_cached"], p["cost_per_1000_uncached"])
        lines.append(
            f"{p['target']} on {p['model']}: minimum {minimum}; per 1,000 calls {cached} cached, "
            f"{uncached} uncached (input only); break-even read share {share}; ttl {p['ttl'] or 'unknown'} ({p['ttl_reason']})"
        )
    return "\n".join(lines)


@click.command("cache", cls=OneLineCommand)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--target", metavar="ID", help="Only this prompt or agent.")
@click.option("--runs", type=click.IntRange(min=0), default=0, show_default=True, metavar="N", help="Also plan the inputs of each target's newest N recorded runs.")
@click.option("--model", metavar="NAME", help="Only this model profile's economics.")
@click.option("--format", "out_format", type=click.Choice(("text", "json")), default="text", show_default=True, help="Text for a terminal, or the JSON document.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True, metavar="SECONDS", help=TIMEOUT_HELP)
def cache(directory: str, target: str | None, runs: int, model: str | None, out_format: str, timeout: float) -> None:
    """Classify each block of every request as static, per-input or per-request, and say what the
    provider's prompt cache can read, what breaks it, the use order that would make it longest, and
    what caching costs per model profile. No model is called."""
    doc = asyncio.run(cache_document(project(directory, UsageFault), timeout, target, runs, model))
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False) if out_format == "json" else render_text(doc))
